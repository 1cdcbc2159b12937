import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { getTask, submitTask, waitForEnd } from "./helpers";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";

describe("a transcoder at capacity", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await Stack.start({ transcoderEnv: { MAX_CONCURRENT_JOBS: "1", MAX_QUEUED_JOBS: "0" } });
  }, 120_000);
  afterAll(() => stack?.stop());

  it("makes extra tasks wait and retry, and loses none", async () => {
    const user = await stack.createUser();
    const clip = await uploadLocalFile(stack, user.key, await makeClip(await mediaDir(), "c.mp4", { seconds: 2 }));
    const ids = await Promise.all([0, 1, 2].map(async (i) => {
      const response = await submitTask(stack, user.key, { command: `ffmpeg -i ${clip.url} -c:v libx264 -preset ultrafast out${i}.mp4` });
      return ((await response.json()) as { task_id: string }).task_id;
    }));
    for (const id of ids) {
      const { task } = await waitForEnd(stack, user.key, id, 90_000);
      expect(task.status, task.error).toBe("completed");
    }
  });
});

describe("a transcoder that dies mid-task", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await Stack.start({ edgeVars: { HEARTBEAT_TIMEOUT_SECONDS: "3" } });
  }, 120_000);
  afterAll(() => stack?.stop());

  it("does not leave the task running forever", async () => {
    const user = await stack.createUser();
    const clip = await uploadLocalFile(stack, user.key, await makeClip(await mediaDir(), "long.mp4", { seconds: 30, size: "1280x720" }));
    const { task_id } = (await (await submitTask(stack, user.key, { command: `ffmpeg -i ${clip.url} -c:v libx264 -preset veryslow slow.mp4` })).json()) as { task_id: string };
    const deadline = Date.now() + 30_000;
    while ((await getTask(stack, user.key, task_id)).status !== "running") {
      if (Date.now() > deadline) throw new Error("task never started");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const transcoder = stack.transcoders[0]!;
    transcoder.process.kill("SIGKILL");
    // Its ffmpeg runs in its own process group; a dead container would take it along.
    try {
      execFileSync("pkill", ["-KILL", "-f", task_id]);
    } catch {
      // pkill exits 1 when nothing matched.
    }
    const { task } = await waitForEnd(stack, user.key, task_id, 30_000);
    expect(task).toMatchObject({ status: "failed", error_code: "TRANSCODER_LOST" });
  });
});
