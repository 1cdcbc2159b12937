import { describe, expect, it } from "vitest";
import { useJobWorld } from "../helpers/job-world";
import { jobFor, postJob } from "../helpers/transcoder";

const world = useJobWorld({ env: { MAX_OUTPUT_FILES: "3", MAX_OUTPUT_BYTES: String(200 * 1024), MAX_INPUT_BYTES: String(150 * 1024), MAX_INPUT_PIXELS: String(160 * 120) } });

describe("job limits", () => {
  it("fails with OUTPUT_LIMIT_EXCEEDED and publishes nothing when a sequence makes too many files", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -r 5 thumb_%03d.png`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "OUTPUT_LIMIT_EXCEEDED", error: expect.stringContaining("3 output files") });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("fails with OUTPUT_LIMIT_EXCEEDED and publishes nothing when outputs pass the byte cap", async () => {
    // Uncompressed video: far more than 200 KiB within the first second.
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -c:v rawvideo big.mkv`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "OUTPUT_LIMIT_EXCEEDED" });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("fails with INPUT_FORMAT_NOT_ALLOWED when a video declares more pixels than allowed", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -vf scale=80:60 out.mp4`);
    world.transcoder.config.maxInputPixels = 160 * 120 - 1;
    try {
      await postJob(world.transcoder.app, job);
      const terminal = await world.edge.waitForTerminal(job.task_id);
      expect(terminal).toMatchObject({ type: "failed", error_code: "INPUT_FORMAT_NOT_ALLOWED", error: expect.stringContaining("160×120") });
    } finally {
      world.transcoder.config.maxInputPixels = 160 * 120;
    }
  });

  it("fails with INPUT_DOWNLOAD_FAILED when an input is larger than MAX_INPUT_BYTES", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/long.mp4")} out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "INPUT_DOWNLOAD_FAILED", error: expect.stringContaining("larger than the limit") });
  });
});
