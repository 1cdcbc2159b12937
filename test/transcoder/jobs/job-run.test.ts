import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useJobWorld } from "../helpers/job-world";
import { probeFile } from "../helpers/media";
import { serveFile } from "../helpers/servers";
import { groupAlive, jobFor, postJob, slowCommand, waitUntil } from "../helpers/transcoder";

const world = useJobWorld({ routes: (clips) => ({ "/image.png": serveFile(clips.image, "image/png") }) });

describe("a job", () => {
  it("reports started, rising progress and completed, each output PUT to {callback_url}/outputs/<name> and its receipt on the report", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -vf scale=1280:720 -c:v libx264 -preset slow -threads 1 small.mp4 -vn -c:a libmp3lame audio.mp3`);
    const response = await postJob(world.transcoder.app, job);
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ accepted: true });

    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal, JSON.stringify(terminal)).toMatchObject({ type: "completed" });
    const events = world.edge.events(job.task_id);
    expect(events[0]?.type).toBe("started");
    const seqs = events.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const progress = events.flatMap((event) => (event.type === "progress" ? [event.progress] : []));
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.some((value) => value > 0 && value < 100)).toBe(true);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));

    if (terminal.type !== "completed") throw new Error("not completed");
    expect(terminal.outputs.map((output) => output.filename).sort()).toEqual(["audio.mp3", "small.mp4"]);
    for (const output of terminal.outputs) {
      const body = world.edge.uploads.get(`${job.task_id}/${output.filename}`);
      expect(body?.length).toBe(output.size);
      expect(output.metadata).toBeUndefined();
      // The edge's receipt for each stored output goes back on the report, which then needs no R2 check.
      expect(output.receipt).toBe(`receipt:${job.task_id}/${output.filename}:${output.size}`);
      const file = path.join(os.tmpdir(), `${job.task_id}-${output.filename}`);
      await writeFile(file, body!);
      const probed = await probeFile(file);
      expect(Number(probed.format.duration)).toBeGreaterThan(2.5);
    }
    expect(world.edge.uploadRequests(job.task_id)).toContainEqual({ filename: "small.mp4", size: expect.any(Number), content_type: "video/mp4" });
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("attaches ffprobe metadata to each output when asked, without local paths", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 -c:v libx264 -preset ultrafast -an out.mp4 -frames:v 1 poster.png`, { with_metadata: true });
    expect((await postJob(world.transcoder.app, job)).statusCode).toBe(202);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    if (terminal.type !== "completed") throw new Error(JSON.stringify(terminal));
    const video = terminal.outputs.find((output) => output.filename === "out.mp4");
    expect(video?.metadata).toMatchObject({ format: { filename: "out.mp4", format_name: expect.stringContaining("mp4") }, streams: [{ codec_type: "video", width: 160 }] });
    const poster = terminal.outputs.find((output) => output.filename === "poster.png");
    expect(poster?.metadata).toMatchObject({ streams: [{ codec_name: "png", width: 160, height: 120 }] });
    expect(JSON.stringify(terminal)).not.toContain(world.transcoder.workRoot);
  });

  it("fails with FFMPEG_FAILED whose error is ffmpeg's cause alone, its whole log on the report", async () => {
    // Allowed by the policy, impossible for this input: it has no subtitle stream.
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -map 0:s out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "FFMPEG_FAILED" });
    if (terminal.type !== "failed") return;
    expect(terminal.error).toBe("Stream map '0:s' matches no streams. To ignore this, add a trailing '?' to the map.");
    // ffmpeg's whole stderr rides on the terminal report, for GET /v1/tasks/{id}/logs: banner, cause and all.
    expect(terminal.log).toMatch(/^Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'input 1':$/m);
    expect(terminal.log).toContain("Stream map '0:s' matches no streams.");
    expect(terminal.log).not.toContain(world.transcoder.workRoot);
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("names ffmpeg's complaint about an output by the output's bare name", async () => {
    // Several frames into one image name: ffmpeg's image2 muxer refuses, quoting the output's path.
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -vf fps=5 frame.png`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({
      type: "failed",
      error_code: "FFMPEG_FAILED",
      error: expect.stringMatching(/^image2: The specified filename 'frame\.png' does not contain an image sequence pattern or a pattern is invalid\. Use a pattern such as %03d/),
    });
    expect(JSON.stringify(terminal)).not.toContain(world.transcoder.workRoot);
    if (terminal.type === "failed") expect(terminal.log).toMatch(/^Output #0, image2, to 'frame\.png':$/m);
  });

  it("fails with INPUT_DOWNLOAD_FAILED when an input cannot be fetched, before running ffmpeg", async () => {
    const causes = [/^Input 1 \(http:\/\/127\.0\.0\.1:1\/refused\.mp4\) could not be downloaded: 127\.0\.0\.1:1 could not be fetched: connection refused/, / answered 404 /];
    for (const [index, url] of ["http://127.0.0.1:1/refused.mp4", world.media.url("/missing.mp4")].entries()) {
      const job = jobFor(world.edge, `ffmpeg -i ${url} out.mp4`);
      await postJob(world.transcoder.app, job);
      const terminal = await world.edge.waitForTerminal(job.task_id);
      expect(terminal).toMatchObject({ type: "failed", error_code: "INPUT_DOWNLOAD_FAILED", error: expect.stringMatching(causes[index]!) });
      expect(world.edge.events(job.task_id).some((event) => event.type === "progress" && event.progress > 0)).toBe(false);
    }
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("fails with COMMAND_REJECTED, naming the token, and fetches nothing when the policy refuses the command", async () => {
    const before = world.media.hits.length;
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -i /etc/passwd out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "COMMAND_REJECTED", error: expect.stringContaining("/etc/passwd") });
    expect(world.media.hits.length).toBe(before);
  });

  it("fails with OUTPUT_MISSING when ffmpeg succeeds without writing a named output", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -frames:v 0 thumb_%03d.png`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "OUTPUT_MISSING", error: expect.stringContaining("thumb_%03d.png") });
  });

  it("publishes every file of a sequence output", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -r 1 -t 3 thumb_%03d.png`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    if (terminal.type !== "completed") throw new Error(JSON.stringify(terminal));
    expect(terminal.outputs.map((output) => output.filename)).toEqual(["thumb_001.png", "thumb_002.png", "thumb_003.png"]);
  });

  it("fails with OUTPUT_UPLOAD_FAILED when the edge refuses an upload", async () => {
    world.edge.uploadStatus = 403;
    try {
      const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 out.mp4`);
      await postJob(world.transcoder.app, job);
      const terminal = await world.edge.waitForTerminal(job.task_id);
      expect(terminal).toMatchObject({ type: "failed", error_code: "OUTPUT_UPLOAD_FAILED", error: expect.stringContaining("out.mp4") });
    } finally {
      world.edge.uploadStatus = undefined;
    }
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("times out: kills ffmpeg's whole process group, fails with TIMEOUT and removes the work directory", async () => {
    const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")), { timeout_seconds: 2 });
    const started = Date.now();
    await postJob(world.transcoder.app, job);
    let pid: number | undefined;
    await waitUntil(() => (pid = world.transcoder.app.jobs.get(job.task_id)?.ffmpegPid) !== undefined);
    expect(groupAlive(pid!)).toBe(true);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "TIMEOUT" });
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(groupAlive(pid!)).toBe(false);
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("stops the job with CANCELED when the edge's ack says cancel", async () => {
    const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
    world.edge.cancelOnNextReport(job.task_id);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id, 10_000);
    expect(terminal).toMatchObject({ type: "failed", error_code: "CANCELED" });
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("retries reports the edge fails to take", async () => {
    world.edge.failNextEvents(2);
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal.type).toBe("completed");
    expect(world.edge.events(job.task_id)[0]?.type).toBe("started");
  });

  it("publishes only the outputs the command declares, not x264's two-pass logs", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -c:v libx264 -flags +pass1 -an out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal, JSON.stringify(terminal)).toMatchObject({ type: "completed" });
    if (terminal.type === "completed") expect(terminal.outputs.map((output) => output.filename)).toEqual(["out.mp4"]);
    expect(world.edge.uploadRequests(job.task_id).map((request) => request.filename)).toEqual(["out.mp4"]);
  });

  it("publishes an HLS playlist with the segments ffmpeg names by default", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -c:v libx264 -g 25 -f hls -hls_time 1 -hls_playlist_type vod index.m3u8`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal, JSON.stringify(terminal)).toMatchObject({ type: "completed" });
    if (terminal.type !== "completed") return;
    const names = terminal.outputs.map((output) => output.filename);
    expect(names[0]).toBe("index.m3u8");
    expect(names.slice(1).length).toBeGreaterThanOrEqual(2);
    for (const name of names.slice(1)) expect(name).toMatch(/^index\d+\.ts$/);
  });
});
