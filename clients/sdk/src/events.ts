import { FFedgeError } from "./errors.js";
import { type HttpOptions, canceled, request, requestJson, sleep } from "./http.js";
import type { Task, TaskEvent } from "./types.js";

export interface TaskEventMessage {
  /** `status` (first), `progress`, then `completed` or `failed`. */
  event: string;
  data: TaskEvent;
}

const TERMINAL = new Set(["completed", "failed"]);
const RECONNECTS = 5;
const POLL_MS = 1_000;

/**
 * The task's Server-Sent Events until it ends, reconnecting after a dropped stream (each new
 * stream starts with the current `status`, so nothing is missed but repeats).
 */
export async function* taskEvents(http: HttpOptions, id: string, signal?: AbortSignal): AsyncGenerator<TaskEventMessage> {
  for (let drops = 0; ; ) {
    let sawEvent = false;
    try {
      for await (const message of oneStream(http, id, signal)) {
        sawEvent = true;
        yield message;
        if (TERMINAL.has(message.data.status)) return;
      }
    } catch (error) {
      if (signal?.aborted) throw canceled(signal);
      if (!(error instanceof FFedgeError) || (error.code !== "NETWORK_ERROR" && error.status < 500)) throw error;
    }
    drops = sawEvent ? 0 : drops + 1;
    if (drops > RECONNECTS) throw FFedgeError.local("NETWORK_ERROR", "Event stream lost", `The event stream of ${id} kept dropping.`);
    await sleep(Math.min(250 * 2 ** drops, 5_000), signal);
  }
}

async function* oneStream(http: HttpOptions, id: string, signal?: AbortSignal): AsyncGenerator<TaskEventMessage> {
  const response = await request(http, `/v1/tasks/${encodeURIComponent(id)}/events`, { headers: { accept: "text/event-stream" }, signal });
  if (!response.body || !response.headers.get("content-type")?.includes("text/event-stream")) {
    throw FFedgeError.local("INVALID_RESPONSE", "Not an event stream", `GET /v1/tasks/${id}/events did not answer with text/event-stream.`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<string>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw FFedgeError.local("NETWORK_ERROR", "Event stream dropped", `The event stream of ${id} broke off.`, error);
      }
      if (chunk.done) return;
      buffer += chunk.value.replace(/\r\n?/g, "\n");
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const message = parseMessage(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (message) yield message;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

function parseMessage(block: string): TaskEventMessage | undefined {
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0) return undefined;
  try {
    return { event, data: JSON.parse(data.join("\n")) as TaskEvent };
  } catch {
    return undefined;
  }
}

export interface WaitOptions {
  onProgress?: (event: TaskEvent) => void;
  signal?: AbortSignal;
  /** Gives up with FFedgeError `TIMEOUT` (the task goes on). */
  timeoutMs?: number;
}

/** Follows a task until it ends (SSE, falling back to polling) and returns it as GET /v1/tasks/{id} does. */
export async function waitForTask(http: HttpOptions, id: string, options: WaitOptions = {}): Promise<Task> {
  const timeout = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
  const signals = [options.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
  try {
    try {
      for await (const message of taskEvents(http, id, signal)) {
        options.onProgress?.(message.data);
        if (TERMINAL.has(message.data.status)) break;
      }
    } catch (error) {
      if (!(error instanceof FFedgeError) || !["NETWORK_ERROR", "INVALID_RESPONSE"].includes(error.code) && error.status < 500) throw error;
      await poll(http, id, options.onProgress, signal);
    }
    return await requestJson<Task>(http, `/v1/tasks/${encodeURIComponent(id)}`, { signal });
  } catch (error) {
    if (timeout?.aborted && !options.signal?.aborted) throw FFedgeError.local("TIMEOUT", "Timed out", `Task ${id} did not end within ${options.timeoutMs} ms; it goes on.`, error);
    throw error;
  }
}

async function poll(http: HttpOptions, id: string, onProgress: ((event: TaskEvent) => void) | undefined, signal?: AbortSignal): Promise<void> {
  for (;;) {
    const task = await requestJson<Task>(http, `/v1/tasks/${encodeURIComponent(id)}`, { signal });
    onProgress?.(task);
    if (TERMINAL.has(task.status)) return;
    await sleep(POLL_MS, signal);
  }
}
