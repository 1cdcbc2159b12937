import { isFinal } from "../tasks/state";
import { type Caller, callApi, callJson } from "./rest";
import { type McpTask, toMcpTask } from "./schemas";

/**
 * The longest a tool call waits for a task. MCP clients give up on a request after about a
 * minute (60 s is the TypeScript SDK's DEFAULT_REQUEST_TIMEOUT_MSEC, which clients built on it
 * inherit), so a wait ends well before that and hands back the task id to wait on again.
 */
export const MAX_WAIT_SECONDS = 50;

/**
 * The task once it has ended, or as it stands after `seconds`. It follows the task's event
 * stream (GET /v1/tasks/{id}/events, one request however long the wait) and reads the task
 * itself at the end, so the answer is exactly what GET /v1/tasks/{id} returns.
 */
export async function waitForTask(caller: Caller, taskId: string, seconds: number, onProgress?: (progress: number) => void): Promise<McpTask> {
  const path = `/v1/tasks/${encodeURIComponent(taskId)}`;
  if (seconds > 0) {
    const deadline = AbortSignal.any([AbortSignal.timeout(seconds * 1000), caller.signal]);
    const stream = await callApi({ ...caller, signal: deadline }, "GET", `${path}/events`);
    await untilFinalEvent(stream.body!, deadline, onProgress);
  }
  return toMcpTask(await callJson(caller, "GET", path));
}

async function untilFinalEvent(body: ReadableStream<Uint8Array>, deadline: AbortSignal, onProgress?: (progress: number) => void): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  // Stopping a stream that has already ended or failed has nothing to do.
  const stop = () => reader.cancel().catch(() => {});
  const onDeadline = () => void stop();
  deadline.addEventListener("abort", onDeadline, { once: true });
  let buffered = "";
  try {
    for (;;) {
      // Cut off or stopped at the deadline: the wait ends, and the task is read as it stands.
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (done) return;
      buffered += value;
      let end: number;
      while ((end = buffered.indexOf("\n\n")) !== -1) {
        const event = parseEvent(buffered.slice(0, end));
        buffered = buffered.slice(end + 2);
        if (event?.progress !== undefined) onProgress?.(event.progress);
        if (event?.status && isFinal(event.status)) return;
      }
    }
  } finally {
    deadline.removeEventListener("abort", onDeadline);
    await stop();
  }
}

function parseEvent(block: string): { status?: McpTask["status"]; progress?: number } | undefined {
  const data = block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("\n");
  if (!data) return undefined;
  try {
    return JSON.parse(data) as { status?: McpTask["status"]; progress?: number };
  } catch {
    return undefined;
  }
}
