import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJobInputs } from "../helpers/job-world";
import { type TestTranscoder, jobFor, postJob, startTranscoder, waitUntil } from "../helpers/transcoder";

// A WORK_ROOT on a 5 MiB tmpfs: a full disk without filling the host's. Mounting needs root.
const asRoot = process.getuid?.() === 0;
const TMPFS_BYTES = 5 * 1024 * 1024;
const COOLDOWN_SECONDS = 2;

describe.skipIf(!asRoot)("a full work directory", () => {
  const world = useJobInputs({ routes: () => ({ "/big.bin": (_request, response) => response.end(Buffer.alloc(8 * 1024 * 1024, 7)) }) });
  let workRoot: string;
  let transcoder: TestTranscoder;

  beforeAll(async () => {
    workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_BYTES},mode=755`, "tmpfs", workRoot]);
    transcoder = await startTranscoder({ WORK_ROOT: workRoot, MIN_FREE_WORK_BYTES: String(1024 * 1024), WORKSPACE_FULL_COOLDOWN_SECONDS: String(COOLDOWN_SECONDS) });
  });
  afterAll(async () => {
    await transcoder?.close();
    if (workRoot) {
      execFileSync("umount", [workRoot]);
      await rm(workRoot, { recursive: true, force: true });
    }
  });

  const jobDirs = async () => (await readdir(workRoot)).filter((entry) => !entry.startsWith("."));

  /** Posts `job` until the cool-down after the last job that ran out of space is over. */
  const postAfterCooldown = async (job: ReturnType<typeof jobFor>) => {
    for (const deadline = Date.now() + (COOLDOWN_SECONDS + 3) * 1000; ; ) {
      const response = await postJob(transcoder.app, job);
      if (response.statusCode !== 503 || Date.now() > deadline) return response;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  const handedBack = (taskId: string) => world.edge.waitForEvent(taskId, (event) => event.type === "handed_back");

  it("hands back a download that does not fit (WORKSPACE_FULL, for the edge to run again), quickly and leaving nothing", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/big.bin")} out.mp4`);
    const started = Date.now();
    expect((await postAfterCooldown(job)).statusCode).toBe(202);
    const terminal = await handedBack(job.task_id);
    expect(terminal).toMatchObject({ type: "handed_back", error_code: "WORKSPACE_FULL", reason: expect.stringMatching(/Input 1 .*no space left/i) });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await jobDirs()).toEqual([]);
  });

  it("refuses new jobs with 503 and Retry-After for WORKSPACE_FULL_COOLDOWN_SECONDS after a job ran out of space, then takes them", async () => {
    const first = jobFor(world.edge, `ffmpeg -i ${world.media.url("/big.bin")} out.mp4`);
    expect((await postAfterCooldown(first)).statusCode).toBe(202);
    await handedBack(first.task_id);
    await waitUntil(() => transcoder.app.jobs.running === 0);
    const next = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 small.mp4`);
    const refused = await postJob(transcoder.app, next);
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({ code: "TRANSCODER_BUSY", detail: expect.stringMatching(/ran out of/) });
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(COOLDOWN_SECONDS);
    expect((await postAfterCooldown(next)).statusCode).toBe(202);
    expect(await world.edge.waitForTerminal(next.task_id)).toMatchObject({ type: "completed" });
    expect(await jobDirs()).toEqual([]);
  });

  it("hands back an encode that fills the disk (WORKSPACE_FULL) and publishes nothing", async () => {
    // Uncompressed video: far more than 5 MiB.
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -vf scale=1280:720 -c:v rawvideo big.mkv`);
    expect((await postAfterCooldown(job)).statusCode).toBe(202);
    const terminal = await handedBack(job.task_id);
    expect(terminal).toMatchObject({ type: "handed_back", error_code: "WORKSPACE_FULL", reason: expect.stringMatching(/no space left/i) });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await jobDirs()).toEqual([]);
  });

  it("answers /health 503 degraded with the reason while free space is below MIN_FREE_WORK_BYTES", async () => {
    const healthy = await transcoder.app.inject({ method: "GET", url: "/health" });
    expect(healthy.statusCode).toBe(200);
    expect(healthy.json()).toMatchObject({ status: "ok", work_root_free_bytes: expect.any(Number) });

    transcoder.config.minFreeWorkBytes = TMPFS_BYTES * 2;
    try {
      const degraded = await transcoder.app.inject({ method: "GET", url: "/health" });
      expect(degraded.statusCode).toBe(503);
      expect(degraded.json()).toMatchObject({ status: "degraded", reason: expect.stringContaining("MIN_FREE_WORK_BYTES") });
    } finally {
      transcoder.config.minFreeWorkBytes = 1024 * 1024;
    }
  });
});
