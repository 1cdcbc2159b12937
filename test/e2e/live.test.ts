import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { type TaskBody, getTask, submitTask, waitForEnd } from "./helpers";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";

let stack: Stack;
let user: { key: string; userId: string };
let clipUrl: string;
let longClipUrl: string;

beforeAll(async () => {
  stack = await Stack.start({ edgeVars: { MAX_RUNNING_TASKS_PER_USER: "1" }, rateLimit: { requests: 200, periodSeconds: 10 } });
  user = await stack.createUser();
  const dir = await mediaDir();
  clipUrl = (await uploadLocalFile(stack, user.key, await makeClip(dir, "clip.mp4", { seconds: 20, size: "640x360" }))).url;
  longClipUrl = (await uploadLocalFile(stack, user.key, await makeClip(dir, "long.mp4", { seconds: 30, size: "1280x720" }))).url;
}, 120_000);

afterAll(() => stack?.stop());

/** Reads a Server-Sent Events stream to its end. */
async function collectEvents(response: Response): Promise<{ event: string; data: TaskBody }[]> {
  const events: { event: string; data: TaskBody }[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) events.push({ event, data: JSON.parse(data) });
    }
  }
  return events;
}

/**
 * The ffmpeg processes the transcoder runs now. Inside its job root ffmpeg's command line names
 * only paths under /job, never the task, so they are found as the transcoder's descendants.
 */
function ffmpegProcesses(): string {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="]).toString().trim().split("\n").map((line) => {
    const [, pid, ppid, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
    return { pid: Number(pid), ppid: Number(ppid), args: args ?? "" };
  });
  const below = new Set([stack.transcoders[0]!.process.pid!]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (below.has(row.ppid) && !below.has(row.pid)) {
        below.add(row.pid);
        grew = true;
      }
    }
  }
  return rows.filter((row) => below.has(row.pid) && /\bffmpeg\b/.test(row.args)).map((row) => `${row.pid} ${row.args}`).join("\n");
}

describe("live progress over Server-Sent Events", () => {
  it("shows the current state, a rising progress sequence and the final state, then ends", async () => {
    const { task_id } = (await (await submitTask(stack, user.key, { command: `ffmpeg -i ${clipUrl} -c:v libx264 -preset veryslow -crf 30 watched.mp4` })).json()) as { task_id: string };
    const stream = await stack.fetch(`/v1/tasks/${task_id}/events`, authed(user.key));
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await collectEvents(stream);
    expect(events[0]!.event).toBe("status");
    const final = events.at(-1)!;
    expect(final.event).toBe("completed");
    expect(final.data).toMatchObject({ status: "completed", progress: 100 });
    expect(final.data.outputs![0]!.filename).toBe("watched.mp4");
    const progress = events.filter((e) => e.event === "progress").map((e) => e.data.progress);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.every((value) => value > 0 && value < 100)).toBe(true);
  });
});

describe("cancel", () => {
  it("stops a running ffmpeg within 2 s and ends the task CANCELED", async () => {
    const { task_id } = (await (await submitTask(stack, user.key, { command: `ffmpeg -i ${longClipUrl} -c:v libx264 -preset veryslow never.mp4` })).json()) as { task_id: string };
    const deadline = Date.now() + 30_000;
    while (ffmpegProcesses() === "") {
      if (Date.now() > deadline) throw new Error("ffmpeg never started");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const canceledAt = Date.now();
    const response = await stack.fetch(`/v1/tasks/${task_id}/cancel`, authed(user.key, { method: "POST" }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "failed", error_code: "CANCELED" });
    while (ffmpegProcesses() !== "" && Date.now() - canceledAt < 2_000) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ffmpegProcesses()).toBe("");
    expect((await stack.fetch(`/v1/tasks/${task_id}/cancel`, authed(user.key, { method: "POST" }))).status).toBe(409);
  });

  it("keeps a canceled pending task from ever starting", async () => {
    const blocker = (await (await submitTask(stack, user.key, { command: `ffmpeg -i ${clipUrl} -c:v libx264 -preset slow blocker.mp4` })).json()) as { task_id: string };
    const waiting = (await (await submitTask(stack, user.key, { command: `ffmpeg -i ${clipUrl} -t 1 -c copy waiting.mp4` })).json()) as { task_id: string };
    expect((await stack.fetch(`/v1/tasks/${waiting.task_id}/cancel`, authed(user.key, { method: "POST" }))).status).toBe(200);
    await waitForEnd(stack, user.key, blocker.task_id);
    const task = await getTask(stack, user.key, waiting.task_id);
    expect(task).toMatchObject({ status: "failed", error_code: "CANCELED" });
    expect((task as TaskBody & { started_at: string | null }).started_at).toBeNull();
  });
});

describe("logs", () => {
  it("keeps ffmpeg's stderr for a finished task", async () => {
    const { task_id } = (await (await submitTask(stack, user.key, { command: `ffmpeg -i ${clipUrl} -t 1 -c copy logged.mp4` })).json()) as { task_id: string };
    await waitForEnd(stack, user.key, task_id);
    const response = await stack.fetch(`/v1/tasks/${task_id}/logs`, authed(user.key));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/Output #0/);
    expect(text).not.toContain("/tmp/");
  });
});

describe("the per-user running cap and the rate limit", () => {
  it("runs excess tasks one at a time in submission order, losing none", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await submitTask(stack, user.key, { command: `ffmpeg -i ${clipUrl} -t 2 -c:v libx264 -preset ultrafast capped${i}.mp4` });
      ids.push(((await response.json()) as { task_id: string }).task_id);
    }
    const ended = [];
    for (const id of ids) ended.push(await waitForEnd(stack, user.key, id, 90_000));
    for (const { task } of ended) expect(task.status, task.error).toBe("completed");
    const windows = await Promise.all(ids.map(async (id) => (await getTask(stack, user.key, id)) as TaskBody & { started_at: string; finished_at: string }));
    for (let i = 1; i < windows.length; i++) {
      expect(Date.parse(windows[i]!.started_at)).toBeGreaterThanOrEqual(Date.parse(windows[i - 1]!.finished_at) - 50);
    }
  });

  it("answers 429 with Retry-After once a key exceeds its rate, and serves it again after the window", async () => {
    const other = await stack.createUser();
    let limited: Response | undefined;
    for (let i = 0; i < 3 * 200 + 1 && !limited; i++) {
      const response = await stack.fetch("/v1/me", authed(other.key));
      if (response.status === 429) limited = response;
    }
    expect(limited).toBeDefined();
    const retryAfter = Number(limited!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(limited!.headers.get("ratelimit-remaining")).toBe("0");
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 200));
    expect((await stack.fetch("/v1/me", authed(other.key))).status).toBe(200);
  });
});
