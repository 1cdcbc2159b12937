import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CAUSE_LENGTH, ffmpegFailure } from "../../../transcoder/jobs/ffmpeg-failure";
import { type Clips, makeClips } from "../helpers/media";

let clips: Clips;
let outDir: string;

beforeAll(async () => {
  clips = await makeClips();
  outDir = await mkdtemp(path.join(os.tmpdir(), "ffedge-ffmpeg-failure-"));
  await mkdir(outDir, { recursive: true });
});

afterAll(async () => {
  await clips?.remove();
  await rm(outDir, { recursive: true, force: true });
});

/**
 * Runs the real ffmpeg as a job does (the service's own options, the input read from a local
 * file, outputs in the job's folder) and returns its stderr with the local paths replaced as the
 * job replaces them: the input by "input 1", outputs by their bare names.
 */
function failingRun(args: string[], output: string): Promise<{ code: number | null; stderr: string }> {
  const argv = ["-nostdin", "-hide_banner", "-nostats", "-y", "-progress", "pipe:1", "-protocol_whitelist", "file", "-i", clips.clip, ...args, path.join(outDir, output)];
  return new Promise((resolve) => {
    execFile("ffmpeg", argv, { cwd: outDir, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stderr: stderr.replaceAll(clips.clip, "input 1").replaceAll(`${outDir}/`, "") });
    });
  });
}

const CASES: [string, string[], string, RegExp][] = [
  ["a map that matches no stream", ["-map", "0:9"], "out.mp4", /^Stream map '0:9' matches no streams\. To ignore this, add a trailing '\?' to the map\.$/],
  ["an unknown encoder", ["-c:v", "foo"], "out.mp4", /^Unknown encoder 'foo'\.$/],
  ["an unknown filter", ["-vf", "nosuchfilter"], "out.mp4", /^No such filter: 'nosuchfilter'\.$/],
  ["a filter argument ffmpeg refuses", ["-vf", "scale=abc"], "out.mp4", /^scale: Invalid size 'abc'\. Error initializing filter 'scale' with args 'abc'\.$/],
  ["an encoder preset that does not exist", ["-c:v", "libx264", "-preset", "nope"], "out.mp4", /^x264: invalid preset 'nope'\. libx264: Error setting preset\/tune nope\/\(null\)\. Possible presets: ultrafast/],
  ["an encoder profile that does not exist", ["-c:v", "libx264", "-profile:v", "nonsense"], "out.mp4", /^x264: invalid profile: nonsense\. libx264: Error setting profile nonsense\./],
  ["an unknown output format", ["-f", "nosuchformat"], "out.mp4", /^Requested output format 'nosuchformat' is not a suitable output format\. out\.mp4: Invalid argument\.$/],
  ["a filter graph naming an input that is not there", ["-filter_complex", "[0:v][1:v]overlay"], "out.mp4", /^Invalid file index 1 in filtergraph description \[0:v\]\[1:v\]overlay\.$/],
  ["a crop larger than the frame", ["-vf", "crop=1000:1000"], "out.mp4", /^crop: Invalid too big or non positive size for width '1000' or height '1000'\.$/],
  ["codecs the container cannot hold", ["-c:v", "copy"], "out.webm", /^webm: Only VP8 or VP9 or AV1 video and Vorbis or Opus audio and WebVTT subtitles are supported for WebM\.$/],
  ["an output left without streams", ["-vn", "-an"], "out.mp3", /^Output file #0 does not contain any stream\.$/],
  ["an expression ffmpeg cannot evaluate", ["-af", "volume=abc"], "out.mp4", /^volume: Undefined constant or missing '\(' in 'abc'\. Error when evaluating the volume expression 'abc'\./],
  ["a sample rate the encoder does not support", ["-c:a", "libopus", "-ar", "12345"], "out.ogg", /^libopus: Specified sample rate 12345 is not supported\.$/],
  ["an unknown pixel format", ["-pix_fmt", "nope"], "out.mp4", /^Unknown pixel format requested: nope\.$/],
  ["several frames into one image name", ["-vf", "fps=5"], "frame.png", /^image2: The specified filename 'frame\.png' does not contain an image sequence pattern or a pattern is invalid\. Use a pattern such as %03d/],
  ["a subtitles file that cannot be opened", ["-vf", "subtitles=missing.srt"], "out.mp4", /^subtitles: Unable to open missing\.srt\. Error initializing filter 'subtitles' with args 'missing\.srt'\.$/],
];

describe("the error of a failed ffmpeg run, from real ffmpeg", () => {
  it.each(CASES)("names the cause first for %s", async (_, args, output, expected) => {
    const { code, stderr } = await failingRun(args, output);
    expect(code, stderr).not.toBe(0);
    const error = ffmpegFailure(stderr, { code, signal: null });
    expect(error).toMatch(expected);
    expect(error.length).toBeLessThanOrEqual(MAX_CAUSE_LENGTH);
    expect(error).not.toMatch(/Conversion failed|Error reinitializing filters|Failed to inject frame|Error while processing the decoded data|Qavg/);
    expect(error).not.toContain(outDir);
    expect(error).not.toContain(clips.dir);
  });
});

describe("the error of a failed ffmpeg run", () => {
  it("names the signal that killed ffmpeg", () => {
    expect(ffmpegFailure("Stream mapping:\n  Stream #0:0 -> #0:0 (h264 (native) -> h264 (libx264))\n", { code: null, signal: "SIGKILL" })).toBe("ffmpeg was killed by SIGKILL.");
  });

  it("falls back to the exit code when ffmpeg said nothing but that it failed", () => {
    expect(ffmpegFailure("Stream mapping:\n  Stream #0:0 -> #0:0 (copy)\nConversion failed!\n", { code: 1, signal: null })).toBe("ffmpeg exited with code 1.");
    expect(ffmpegFailure("", { code: 69, signal: null })).toBe("ffmpeg exited with code 69.");
  });

  it("gives the consequence when no line before it says more", () => {
    const stderr = "[mp4 @ 0x55d0] Could not find tag for codec h264 in stream #0\nCould not write header for output file #0 (incorrect codec parameters ?): Invalid argument\nConversion failed!\n";
    expect(ffmpegFailure(stderr, { code: 1, signal: null })).toBe("mp4: Could not find tag for codec h264 in stream #0.");
    expect(ffmpegFailure("Could not write header for output file #0 (incorrect codec parameters ?): Invalid argument\nConversion failed!\n", { code: 1, signal: null })).toBe(
      "Could not write header for output file #0 (incorrect codec parameters ?): Invalid argument.",
    );
  });

  it("ignores words in the input's description, which the uploader wrote", () => {
    const stderr = ["Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'input 1':", "  Metadata:", "    title           : Invalid data, cannot open, error", "Unknown encoder 'foo'"].join("\n");
    expect(ffmpegFailure(stderr, { code: 1, signal: null })).toBe("Unknown encoder 'foo'.");
  });

  it("names the codec of ffmpeg 6's stream prefixes, and stops at the consequence a prefix does not hide", () => {
    const stderr = "[vost#0:0/libx264 @ 0x5581] Error setting profile nonsense.\n[out#0/mp4 @ 0x5582] Error initializing output stream: Invalid argument\nConversion failed!\n";
    expect(ffmpegFailure(stderr, { code: 1, signal: null })).toBe("libx264: Error setting profile nonsense.");
  });

  it("keeps whole lines within the cap and cuts a single overlong one", () => {
    const long = `Invalid argument ${"x".repeat(400)}`;
    const error = ffmpegFailure(`${long}\n`, { code: 1, signal: null });
    expect(error).toHaveLength(MAX_CAUSE_LENGTH);
    expect(error.endsWith("…")).toBe(true);
    const two = ffmpegFailure(`Invalid size '${"a".repeat(200)}'\nError initializing filter 'scale' with args '${"a".repeat(200)}'\n`, { code: 1, signal: null });
    expect(two).toBe(`Invalid size '${"a".repeat(200)}'.`);
  });
});
