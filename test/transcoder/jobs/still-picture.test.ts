/**
 * A looped still picture with a song and `-shortest`, no `-map` (docs/security.md case 18.9).
 * The policy accepts it because the audio ffmpeg picks itself can only come from an input that
 * ends; these run it on the real transcoder: the song ends the output, and where the other input
 * has no audio after all, the task's time limit stops what `-shortest` does not.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useJobWorld } from "../helpers/job-world";
import { probeFile } from "../helpers/media";
import { serveFile } from "../helpers/servers";
import { jobFor, postJob } from "../helpers/transcoder";

/** Two seconds of tone as MP3: an audio-only input. */
function makeSong(dir: string): string {
  const song = path.join(dir, "song.mp3");
  execFileSync("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", song]);
  return song;
}

const world = useJobWorld({
  routes: (clips) => ({ "/cover.png": serveFile(clips.image, "image/png"), "/song.mp3": serveFile(makeSong(clips.dir), "audio/mpeg") }),
});

describe("a looped picture with -shortest and the streams ffmpeg picks", () => {
  it("ends with the song: the picked audio comes from the input that ends", async () => {
    const job = jobFor(world.edge, `ffmpeg -loop 1 -i ${world.media.url("/cover.png")} -i ${world.media.url("/song.mp3")} -c:v libx264 -tune stillimage -preset ultrafast -c:a aac -shortest out.mp4`);
    expect((await postJob(world.transcoder.app, job)).statusCode).toBe(202);
    const terminal = await world.edge.waitForTerminal(job.task_id, 60_000);
    if (terminal.type !== "completed") throw new Error(JSON.stringify(terminal));
    const file = path.join(os.tmpdir(), `${job.task_id}-out.mp4`);
    await writeFile(file, world.edge.uploads.get(`${job.task_id}/out.mp4`)!);
    const probed = await probeFile(file);
    expect(probed.streams.map((stream) => stream.codec_type).sort()).toEqual(["audio", "video"]);
    // The encoder's lookahead adds a few buffered frames after the audio ends, never more.
    expect(Number(probed.format.duration)).toBeGreaterThan(1.5);
    expect(Number(probed.format.duration)).toBeLessThan(10);
  });

  it("is stopped at the task's time limit when the other input has no audio, so nothing ends the output", async () => {
    const job = jobFor(world.edge, `ffmpeg -loop 1 -i ${world.media.url("/cover.png")} -i ${world.media.url("/cover.png")} -c:v libx264 -preset ultrafast -shortest out.mp4`, { timeout_seconds: 3 });
    expect((await postJob(world.transcoder.app, job)).statusCode).toBe(202);
    const terminal = await world.edge.waitForTerminal(job.task_id, 30_000);
    expect(terminal).toMatchObject({ type: "failed", error_code: "TIMEOUT", error: expect.stringContaining("limit of 3 s") });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(world.transcoder.app.jobs.running).toBe(0);
  });
});
