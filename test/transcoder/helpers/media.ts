import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface Clips {
  dir: string;
  /** 4 s, 160×120 at 25 fps, H.264 + AAC. */
  clip: string;
  /** 60 s, 64×48 at 10 fps: long enough to cancel or time out when read with `-re`. */
  long: string;
  /** One 64×48 PNG. */
  image: string;
  remove(): Promise<void>;
}

/** Test media made by the harness itself with ffmpeg's generators (never through a job's command). */
export async function makeClips(): Promise<Clips> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "ffedge-transcoder-media-"));
  const clip = path.join(dir, "clip.mp4");
  const long = path.join(dir, "long.mp4");
  const image = path.join(dir, "image.png");
  await Promise.all([
    ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=frequency=440", "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", clip]),
    ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10", "-t", "60", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", long]),
    ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1", image]),
  ]);
  return { dir, clip, long, image, remove: () => rm(dir, { recursive: true, force: true }) };
}

async function ffmpeg(args: string[]): Promise<void> {
  await run("ffmpeg", ["-v", "error", "-nostdin", "-y", ...args]);
}

/** ffprobe's JSON for a file or bytes on disk, as the tests check outputs. */
export async function probeFile(file: string): Promise<{ format: { format_name: string; duration?: string }; streams: { codec_type: string; width?: number }[] }> {
  const { stdout } = await run("ffprobe", ["-v", "error", "-show_format", "-show_streams", "-of", "json", file]);
  return JSON.parse(stdout);
}
