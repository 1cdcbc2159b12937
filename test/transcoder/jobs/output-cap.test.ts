import { describe, expect, it } from "vitest";
import { useJobWorld } from "../helpers/job-world";
import { jobFor, postJob } from "../helpers/transcoder";

const FILE_CAP = 2 * 1024 * 1024;

// With the sandbox, RLIMIT_FSIZE stops the write that crosses the cap; without it (SANDBOX=off, no
// rlimits) the watch on out/ does, within half a second. The transcoder's own caps stay at their
// defaults (2 GiB in total): the job's cap is the one that holds.
describe.each(["auto", "off"])("the output cap the edge sends with a job (SANDBOX=%s)", (sandbox) => {
  const world = useJobWorld({ env: { SANDBOX: sandbox } });

  it("stops ffmpeg as soon as one output passes the edge's per-file limit, publishing nothing", async () => {
    // Uncompressed 720p: 1.4 MB a frame, 270 MB for the whole command; the cap is crossed within two frames.
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/long.mp4")} -t 20 -vf scale=1280:720 -c:v rawvideo big.mkv`, { max_output_file_bytes: FILE_CAP });
    const started = Date.now();
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "OUTPUT_LIMIT_EXCEEDED", error: expect.stringContaining(`grew past the limit of ${FILE_CAP} bytes for one file`) });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("publishes outputs within the limit", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 -c copy small.mp4`, { max_output_file_bytes: FILE_CAP });
    await postJob(world.transcoder.app, job);
    expect(await world.edge.waitForTerminal(job.task_id)).toMatchObject({ type: "completed" });
  });
});
