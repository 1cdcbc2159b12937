import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { type TaskBody, getTask, submitTask, waitForEnd } from "./helpers";
import { throttledLink } from "./relay";

// Faults on the real stack: whatever is lost, every task ends, and ends well when the
// service comes back. Deadlines are generous: these tests run on busy machines.

async function waitForStatus(stack: Stack, key: string, taskId: string, status: string, timeoutMs = 120_000): Promise<TaskBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(stack, key, taskId);
    if (task.status === status) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} is ${task.status}, never ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function until(condition: () => boolean, timeoutMs: number, failure: string): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition(); ) {
    if (Date.now() > deadline) throw new Error(failure);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("faults on the real stack", () => {
  let stack: Stack;
  let key: string;
  let shortUrl: string;
  let longUrl: string;
  beforeAll(async () => {
    stack = await Stack.start();
    ({ key } = await stack.createUser());
    const dir = await mediaDir();
    shortUrl = (await uploadLocalFile(stack, key, await makeClip(dir, "short.mp4", { seconds: 2 }))).url;
    longUrl = (await uploadLocalFile(stack, key, await makeClip(dir, "long.mp4", { seconds: 20, size: "1280x720" }))).url;
  }, 180_000);
  afterAll(() => stack?.stop());

  // A long enough run to be interrupted: seconds of CPU even on a fast machine.
  const longCommand = () => `ffmpeg -i ${longUrl} -c:v libx264 -preset slow -crf 23 out.mp4`;

  it("completes a task whose job message was lost: submitted while no transcoder runs, the edge restarted, the transcoder back", async () => {
    await stack.killTranscoder();
    const response = await submitTask(stack, key, { command: `ffmpeg -i ${shortUrl} -c:v libx264 -preset ultrafast out.mp4` });
    expect(response.status).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    // The local queue lives in workerd's memory: restarting the edge loses whatever it held.
    await stack.restartEdge();
    await stack.restartTranscoder();
    const { task } = await waitForEnd(stack, key, task_id, 180_000);
    expect(task.status, task.error).toBe("completed");
  }, 300_000);

  it("starts a task again when its transcoder is killed mid-run, and completes it once the transcoder is back", async () => {
    const { task_id } = (await (await submitTask(stack, key, { command: longCommand() })).json()) as { task_id: string };
    await waitForStatus(stack, key, task_id, "running");
    await stack.killTranscoder();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await stack.restartTranscoder();
    const { task } = await waitForEnd(stack, key, task_id, 600_000);
    expect(task.status, task.error).toBe("completed");
    expect((task as TaskBody & { retries: number }).retries).toBe(1);
  }, 660_000);

  it("completes a running task through a restart of the edge", async () => {
    const { task_id } = (await (await submitTask(stack, key, { command: longCommand() })).json()) as { task_id: string };
    // Restarted while ffmpeg encodes (the next test restarts it during the input download).
    for (const deadline = Date.now() + 120_000; (await getTask(stack, key, task_id)).progress === 0; ) {
      if (Date.now() > deadline) throw new Error("the task never made progress");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await stack.restartEdge();
    const { task } = await waitForEnd(stack, key, task_id, 600_000);
    expect(task.status, task.error).toBe("completed");
    expect((task as TaskBody & { retries: number }).retries).toBe(0);
  }, 660_000);

  it("completes a task whose input download is cut by a restart of the edge: the transcoder fetches the input again", async () => {
    // 20 s of raw 320x240 video (58 MB), far more than the socket buffers that could still
    // deliver the rest of it after the edge is gone.
    const dir = await mediaDir();
    const raw = join(dir, "raw.mkv");
    await promisify(execFile)("ffmpeg", ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=20", "-c:v", "rawvideo", "-pix_fmt", "yuv420p", raw]);
    const { url } = await uploadLocalFile(stack, key, raw, "video/x-matroska");
    // The transcoder reaches the edge's CDN route through a link that carries 1 MB/s: at
    // least a minute for the whole input, so the restart lands inside the download.
    const link = await throttledLink(stack.edgeUrl, 1_000_000);
    try {
      const input = url.replace(stack.edgeUrl, link.url);
      const response = await submitTask(stack, key, { command: `ffmpeg -i ${input} -t 1 -c:v libx264 -preset ultrafast out.mp4` });
      expect(response.status).toBe(201);
      const { task_id } = (await response.json()) as { task_id: string };
      await until(() => link.delivered > 1_000_000, 120_000, "the input download never started");
      await stack.restartEdge();
      link.release();
      const { task } = await waitForEnd(stack, key, task_id, 300_000);
      expect(task.status, task.error).toBe("completed");
      // Fetched again within the same run, not by starting the task over.
      expect(link.connections).toBeGreaterThan(1);
      expect((task as TaskBody & { retries: number }).retries).toBe(0);
    } finally {
      await link.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 480_000);
});
