import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../shared/ffmpeg/index";
import { StreamInfoParser } from "../../../transcoder/ffmpeg/stream-info";
import type { JobFailure } from "../../../transcoder/jobs/failure";
import { RuntimeGuard } from "../../../transcoder/jobs/guard";
import { useJobWorld } from "../helpers/job-world";
import { jobFor, postJob } from "../helpers/transcoder";

const world = useJobWorld({ env: { STALL_SECONDS: "1" } });

describe("the runtime guard on a job", () => {
  it("fails with STALLED and frees the slot when ffmpeg writes nothing for STALL_SECONDS (five times that before a first output)", async () => {
    // Decodes and scales ten minutes of video to 4K but selects no frame: busy, yet no output advances.
    const job = jobFor(world.edge, `ffmpeg -stream_loop 10 -i ${world.media.url("/long.mp4")} -vf scale=3840:2160:flags=lanczos,select=0 -an out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id, 30_000);
    expect(terminal).toMatchObject({ type: "failed", error_code: "STALLED", error: expect.stringContaining("no progress") });
    expect(world.transcoder.app.jobs.running).toBe(0);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("fails with LIMIT_EXCEEDED when an output runs far past its inputs' length (adelay=999999999)", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -af adelay=999999999 out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id, 30_000);
    expect(terminal.type).toBe("failed");
    // The policy may learn to refuse this at submission; at run time the guard must stop it.
    if (terminal.type === "failed") expect(["LIMIT_EXCEEDED", "COMMAND_REJECTED"]).toContain(terminal.error_code);
    if (terminal.type === "failed" && terminal.error_code === "LIMIT_EXCEEDED") expect(terminal.error).toMatch(/ran past 100 s \(its inputs last 4 s\)/);
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
  });

  it("fails with LIMIT_EXCEEDED when an output frame is larger than the caps ffmpeg reports (scale=iw*60)", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -vf scale=iw*60:ih*60 -frames:v 1 big.png`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id, 60_000);
    expect(terminal.type).toBe("failed");
    if (terminal.type === "failed") expect(["LIMIT_EXCEEDED", "COMMAND_REJECTED"]).toContain(terminal.error_code);
    if (terminal.type === "failed" && terminal.error_code === "LIMIT_EXCEEDED") expect(terminal.error).toContain("9600×7200");
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
  });
});

/** Runs ffmpeg directly and feeds its stderr to a parser and guard, as a job does. */
function guardOver(args: string[], limits: Partial<typeof DEFAULT_LIMITS>): Promise<JobFailure[]> {
  const failures: JobFailure[] = [];
  const guard = new RuntimeGuard({ stallMs: 60_000, maxInputPixels: 8192 * 8192, limits: { ...DEFAULT_LIMITS, ...limits }, onViolation: (failure) => failures.push(failure) });
  const parser = new StreamInfoParser({ onInput: (index, facts) => guard.input(index, facts), onOutputStream: (index, stream) => guard.outputStream(index, stream) });
  return new Promise((resolve, reject) => {
    const child = execFile("ffmpeg", ["-nostdin", "-hide_banner", "-y", ...args, "-f", "null", "-"], (error) => (error ? reject(error) : resolve(failures)));
    child.stderr?.on("data", (chunk: Buffer) => parser.push(chunk));
  });
}

describe("the runtime guard reading real ffmpeg output", () => {
  it("trips on an output frame size above the caps", async () => {
    const failures = await guardOver(["-i", world.clips.clip, "-vf", "scale=320:240", "-t", "0.2"], { maxWidth: 319 });
    expect(failures.map((failure) => [failure.code, failure.message])).toEqual([["LIMIT_EXCEEDED", expect.stringContaining("320×240")]]);
  });

  it("trips on an output sample rate above the caps", async () => {
    const failures = await guardOver(["-i", world.clips.clip, "-af", "aresample=96000", "-t", "0.2"], { maxSampleRate: 48_000 });
    expect(failures.map((failure) => [failure.code, failure.message])).toEqual([["LIMIT_EXCEEDED", expect.stringContaining("96000 Hz")]]);
  });

  it("stays quiet within the caps", async () => {
    expect(await guardOver(["-i", world.clips.clip, "-t", "0.2"], {})).toEqual([]);
  });

  it("trips on an input frame above the pixel cap", async () => {
    const failures: JobFailure[] = [];
    const guard = new RuntimeGuard({ stallMs: 60_000, maxInputPixels: 160 * 120 - 1, limits: DEFAULT_LIMITS, onViolation: (failure) => failures.push(failure) });
    const parser = new StreamInfoParser({ onInput: (index, facts) => guard.input(index, facts) });
    await new Promise<void>((resolve, reject) => {
      const child = execFile("ffmpeg", ["-nostdin", "-hide_banner", "-i", world.clips.clip, "-t", "0.1", "-f", "null", "-"], (error) => (error ? reject(error) : resolve()));
      child.stderr?.on("data", (chunk: Buffer) => parser.push(chunk));
    });
    expect(failures.map((failure) => failure.code)).toEqual(["INPUT_FORMAT_NOT_ALLOWED"]);
    expect(parser.inputs[0]).toMatchObject({ format: "mov,mp4,m4a,3gp,3g2,mj2", durationSeconds: 4 });
    expect(parser.inputs[0]?.streams).toEqual([{ kind: "video", width: 160, height: 120, frameRate: 25 }, { kind: "audio", sampleRate: 44100 }]);
  });
});
