import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { getTask, submitTask, waitForEnd } from "./helpers";

// The transcoder's WORK_ROOT on a small tmpfs, nearly filled by another writer: a full disk
// without filling the host's (issue 18, item 17). Mounting needs root. 8 MiB, 6 of them taken
// by `.filler-1`: 2 MiB free, above MIN_FREE_WORK_BYTES (1 MiB) until `.filler-2` is added.
const MiB = 1024 * 1024;
const COOLDOWN_SECONDS = 2;
const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)("a full transcoder work directory on the real stack", () => {
  let workRoot: string;
  let stack: Stack;
  let key: string;
  let dir: string;
  let clipUrl: string;
  beforeAll(async () => {
    workRoot = await mkdtemp(join(tmpdir(), "ffedge-e2e-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${8 * MiB},mode=755`, "tmpfs", workRoot]);
    await writeFile(join(workRoot, ".filler-1"), Buffer.alloc(6 * MiB));
    stack = await Stack.start({ transcoderEnv: { WORK_ROOT: workRoot, MIN_FREE_WORK_BYTES: String(MiB), WORKSPACE_FULL_COOLDOWN_SECONDS: String(COOLDOWN_SECONDS) } });
    ({ key } = await stack.createUser());
    dir = await mediaDir();
    clipUrl = (await uploadLocalFile(stack, key, await makeClip(dir, "clip.mp4", { seconds: 4 }))).url;
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    if (workRoot) {
      execFileSync("umount", [workRoot]);
      await rm(workRoot, { recursive: true, force: true });
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const jobDirs = async () => (await readdir(workRoot)).filter((entry) => !entry.startsWith("."));
  const submit = async (command: string) => ((await (await submitTask(stack, key, { command })).json()) as { task_id: string }).task_id;
  /** The transcoder's "job finished" log lines for a task that ended as `outcome`. */
  const finished = (taskId: string, outcome: string) =>
    stack.transcoders[0]!.logs.join("").split("\n").filter((line) => line.includes(taskId) && line.includes('"job finished"') && line.includes(`"outcome":"${outcome}"`)).length;

  it("keeps a task submitted while the disk is short pending, not failed, and completes it once space is freed", async () => {
    const filler = join(workRoot, ".filler-2");
    await writeFile(filler, Buffer.alloc(MiB + MiB / 2));
    let taskId: string;
    try {
      taskId = await submit(`ffmpeg -i ${clipUrl} -t 1 small.mp4`);
      const waitUntil = Date.now() + 8_000;
      while (Date.now() < waitUntil) {
        const task = await getTask(stack, key, taskId);
        expect(task.status, task.error).toBe("pending");
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(finished(taskId, "failed") + finished(taskId, "handed_back")).toBe(0);
      expect(await jobDirs()).toEqual([]);
    } finally {
      await rm(filler, { force: true });
    }

    const { task } = await waitForEnd(stack, key, taskId, 30_000);
    expect(task.status, task.error).toBe("completed");
    expect(task.outputs?.map((output) => output.filename)).toEqual(["small.mp4"]);
  }, 60_000);

  it("hands back a task that fills the disk mid-run, and completes it once space is freed", async () => {
    // 30 raw 320×240 frames: about 3.3 MiB, more than the 2 MiB free, less than 8.
    const taskId = await submit(`ffmpeg -i ${clipUrl} -frames:v 30 -an -c:v rawvideo mid.mkv`);
    const deadline = Date.now() + 30_000;
    while (finished(taskId, "handed_back") === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(finished(taskId, "handed_back")).toBeGreaterThan(0);
    expect((await getTask(stack, key, taskId)).status).not.toBe("failed");
    expect(await jobDirs()).toEqual([]);

    await unlink(join(workRoot, ".filler-1"));
    try {
      const { task } = await waitForEnd(stack, key, taskId, 40_000);
      expect(task.status, task.error).toBe("completed");
      expect(task.outputs?.map((output) => output.filename)).toEqual(["mid.mkv"]);
      expect(task.outputs![0]!.size).toBeGreaterThan(3 * MiB);
    } finally {
      await writeFile(join(workRoot, ".filler-1"), Buffer.alloc(6 * MiB));
    }
  }, 90_000);

  it("fails a task that never fits with WORKSPACE_FULL once its hand-backs are spent, leaving nothing behind", async () => {
    const taskId = await submit(`ffmpeg -i ${clipUrl} -vf scale=1280:720 -c:v rawvideo big.mkv`);
    const { task } = await waitForEnd(stack, key, taskId, 110_000);
    expect(task.error_code, task.error).toBe("WORKSPACE_FULL");
    expect(task.error).toMatch(/no space left.*handed back 6 times/is);
    expect(finished(taskId, "handed_back")).toBe(6);
    expect(task.outputs ?? []).toEqual([]);
    expect(await jobDirs()).toEqual([]);
  }, 120_000);

  it("answers /health 503 degraded, saying why, once free space falls below MIN_FREE_WORK_BYTES", async () => {
    const url = `${stack.transcoders[0]!.url}/health`;
    expect((await fetch(url)).status).toBe(200);
    await writeFile(join(workRoot, ".filler-2"), Buffer.alloc(MiB + MiB / 2));
    try {
      const response = await fetch(url);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ status: "degraded", reason: expect.stringContaining("below MIN_FREE_WORK_BYTES") });
    } finally {
      await unlink(join(workRoot, ".filler-2"));
    }
  });
});
