import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCommand, DEFAULT_LIMITS, type ParsedCommand } from "../../../shared/ffmpeg/index";
import { StreamInfoParser } from "../../../transcoder/ffmpeg/stream-info";
import type { JobFailure } from "../../../transcoder/jobs/failure";
import { RuntimeGuard } from "../../../transcoder/jobs/guard";
import { useJobWorld } from "../helpers/job-world";
import { serveFile } from "../helpers/servers";
import { jobFor, postJob } from "../helpers/transcoder";

/** Clips made for the tests below (beforeAll), served to jobs by the world's media server. */
const made = mkdtempSync(join(tmpdir(), "guard-clips-"));
const clip = (name: string) => join(made, name);
const MADE_CLIPS = { "landscape.mp4": "testsrc=s=320x180:r=25", "strip.mp4": "testsrc=s=4000x100:r=25", "slowmo.mp4": "testsrc=r=480:s=64x64", "upright.mp4": "testsrc=s=200x400:r=25" };
beforeAll(async () => {
  const ffmpeg = (...args: string[]) => promisify(execFile)("ffmpeg", ["-nostdin", "-v", "error", ...args]);
  await Promise.all(Object.entries(MADE_CLIPS).map(([name, source]) => ffmpeg("-f", "lavfi", "-i", source, "-t", "0.5", "-c:v", "mpeg4", clip(name))));
  // Stored 200x400, shown turned (a phone's rotation flag): ffmpeg turns it to 400x200 before the graph.
  await ffmpeg("-i", clip("upright.mp4"), "-c", "copy", "-metadata:s:v:0", "rotate=90", clip("turned.mp4"));
});
afterAll(() => rm(made, { recursive: true, force: true }));

const world = useJobWorld({
  env: { STALL_SECONDS: "1" },
  routes: () => Object.fromEntries(Object.keys(MADE_CLIPS).map((name) => [`/${name}`, serveFile(clip(name), "video/mp4")])),
});

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

describe("the runtime guard on a job's intermediate frames (case 18.8)", () => {
  it("fails with LIMIT_EXCEEDED when the graph stacks input frames past the caps and scales them down before the output", async () => {
    const labels = Array.from({ length: 64 }, (_, index) => `[s${index}]`).join("");
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -vf '${`split=64${labels};${labels}hstack=64,scale=640:-2`}' -frames:v 1 wide.png`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id, 60_000);
    expect(terminal).toMatchObject({ type: "failed", error_code: "LIMIT_EXCEEDED", error: expect.stringContaining("'hstack' makes frames of 10240x120") });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
  });
});

/** Runs ffmpeg directly and feeds its stderr to a parser and guard, as a job does. */
function guardOver(args: string[], limits: Partial<typeof DEFAULT_LIMITS>, command?: ParsedCommand): Promise<JobFailure[]> {
  const failures: JobFailure[] = [];
  const guard = new RuntimeGuard({ stallMs: 60_000, maxInputPixels: 8192 * 8192, limits: { ...DEFAULT_LIMITS, ...limits }, command, onViolation: (failure) => failures.push(failure) });
  const parser = new StreamInfoParser({
    onInput: (index, facts) => guard.input(index, facts),
    onOutputStream: (index, stream) => guard.outputStream(index, stream),
    onStreamMapping: (output, stream, copied) => guard.streamMapping(output, stream, copied),
  });
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

  it("trips on an output frame rate above the caps", async () => {
    const failures = await guardOver(["-i", world.clips.clip, "-vf", "fps=50", "-t", "0.2"], { maxFrameRate: 30 });
    expect(failures.map((failure) => [failure.code, failure.message])).toEqual([["LIMIT_EXCEEDED", expect.stringContaining("50 frames per second")]]);
  });

  it.each([
    ["split=4[a][b][c][d];[a][b][c][d]hstack=4,scale=64:-2", "hstack", "640x120"],
    ["tile=4x1:padding=4,scale=64:-2", "tile", "652x120"],
    ["split=4[a][b][c][d];[a][b][c][d]xstack=inputs=4:layout=0_0|w0_0|w0+w1_0|w0+w1+w2_0,scale=64:-2", "xstack", "640x120"],
  ])("trips on a frame the graph makes from the input past the caps, though scaled down before the output (%s)", async (graph, filter, size) => {
    const limits = { maxWidth: 600 };
    // Accepted at submission: the frames' size follows from the input's, unknown until ffmpeg reads it.
    const command = checkCommand(`ffmpeg -i https://example.com/clip.mp4 -vf '${graph}' out.mp4`, { limits });
    const failures = await guardOver(["-i", world.clips.clip, "-vf", graph, "-frames:v", "4"], limits, command);
    expect(failures.map((failure) => [failure.code, failure.message])).toEqual([["LIMIT_EXCEEDED", expect.stringMatching(new RegExp(`'${filter}' makes frames of ${size}`))]]);
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

describe("the runtime guard on sizes and rates that follow from the real input (case 18.8, costs)", () => {
  const COVER = "scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920";
  const coverCommand = checkCommand(`ffmpeg -i https://example.com/clip.mp4 -vf '${COVER}' out.mp4`);

  it("lets a 16:9 input be scaled to cover 1080x1920 and cropped", async () => {
    expect(await guardOver(["-i", clip("landscape.mp4"), "-vf", COVER, "-frames:v", "1"], {}, coverCommand)).toEqual([]);
  });

  it("stops covering 1080x1920 with a 4000x100 input, which makes 76800x1920 frames before the crop", async () => {
    const failures = await guardOver(["-i", clip("strip.mp4"), "-vf", COVER, "-frames:v", "1"], {}, coverCommand);
    expect(failures.map((failure) => [failure.code, failure.message])).toEqual([["LIMIT_EXCEEDED", expect.stringContaining("'scale' makes frames of 76800x1920")]]);
  });

  it("stops covering with a clip whose size ffmpeg reports as stored but turns before the graph", async () => {
    const graph = "scale=100:8000:force_original_aspect_ratio=increase,crop=100:8000";
    const command = checkCommand(`ffmpeg -i https://example.com/clip.mp4 -vf '${graph}' out.mp4`);
    const failures = await guardOver(["-i", clip("turned.mp4"), "-vf", graph, "-frames:v", "1"], {}, command);
    expect(failures.map((failure) => [failure.code, failure.message])).toEqual([["LIMIT_EXCEEDED", expect.stringContaining("'scale' makes frames of 16000x8000")]]);
  });

  it("lets a 480 fps clip be copied: copying makes no frames", async () => {
    expect(await guardOver(["-i", clip("slowmo.mp4"), "-c:v", "copy"], {})).toEqual([]);
  });

  it("stops encoding that clip at 480 fps", async () => {
    const failures = await guardOver(["-i", clip("slowmo.mp4"), "-c:v", "mpeg4"], {});
    expect(failures.map((failure) => [failure.code, failure.message])).toEqual([["LIMIT_EXCEEDED", expect.stringContaining("480 frames per second; the limit is 240")]]);
  });

  it("stops the encoded stream of an output that copies another fast one", async () => {
    const failures = await guardOver(["-i", clip("slowmo.mp4"), "-map", "0:v", "-map", "0:v", "-c:v:0", "copy", "-c:v:1", "mpeg4"], {});
    expect(failures.map((failure) => failure.code)).toEqual(["LIMIT_EXCEEDED"]);
  });
});

describe("jobs that scale to cover, or copy a high-speed clip (case 18.8, costs)", () => {
  const COVER = "scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920";
  const run = async (command: string) => {
    const job = jobFor(world.edge, command);
    await postJob(world.transcoder.app, job);
    return { job, terminal: await world.edge.waitForTerminal(job.task_id, 60_000) };
  };

  it("completes a cover-and-crop of a 16:9 clip and a stream copy of a 480 fps clip", async () => {
    const cover = await run(`ffmpeg -i ${world.media.url("/landscape.mp4")} -vf ${COVER} -frames:v 2 cover.mp4`);
    expect(cover.terminal, JSON.stringify(cover.terminal)).toMatchObject({ type: "completed" });
    const copy = await run(`ffmpeg -i ${world.media.url("/slowmo.mp4")} -c:v copy copied.mp4`);
    expect(copy.terminal, JSON.stringify(copy.terminal)).toMatchObject({ type: "completed" });
  });

  it("fails with LIMIT_EXCEEDED when covering turns a 4000x100 clip into 76800x1920 frames, and uploads nothing", async () => {
    const { job, terminal } = await run(`ffmpeg -i ${world.media.url("/strip.mp4")} -vf ${COVER} -frames:v 2 cover.mp4`);
    expect(terminal).toMatchObject({ type: "failed", error_code: "LIMIT_EXCEEDED", error: expect.stringContaining("76800x1920") });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
  });
});
