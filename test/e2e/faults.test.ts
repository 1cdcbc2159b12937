import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { type TaskBody, getTask, submitTask, waitForEnd } from "./helpers";

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
    // Restarted while ffmpeg encodes: an input download cut by the restart is not retried yet.
    for (const deadline = Date.now() + 120_000; (await getTask(stack, key, task_id)).progress === 0; ) {
      if (Date.now() > deadline) throw new Error("the task never made progress");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await stack.restartEdge();
    const { task } = await waitForEnd(stack, key, task_id, 600_000);
    expect(task.status, task.error).toBe("completed");
    expect((task as TaskBody & { retries: number }).retries).toBe(0);
  }, 660_000);
});
