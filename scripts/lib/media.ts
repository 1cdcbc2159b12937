import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Test clips made by the harness itself with ffmpeg's lavfi sources (never by a user
 * command, which may not use lavfi).
 */
export async function makeClip(dir: string, name: string, options: { seconds?: number; size?: string; audio?: boolean } = {}): Promise<string> {
  const path = join(dir, name);
  const seconds = String(options.seconds ?? 2);
  const args = ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", `testsrc=size=${options.size ?? "320x240"}:rate=25:duration=${seconds}`];
  if (options.audio !== false) args.push("-f", "lavfi", "-i", `sine=frequency=440:sample_rate=44100:duration=${seconds}`);
  args.push("-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p");
  if (options.audio !== false) args.push("-c:a", "aac", "-shortest");
  args.push(path);
  await run("ffmpeg", args);
  return path;
}

export async function makeAudio(dir: string, name: string, seconds = 2): Promise<string> {
  const path = join(dir, name);
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", `sine=frequency=330:duration=${seconds}`, path]);
  return path;
}

export async function makeImage(dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=red@0.8:size=64x32,format=rgba", "-frames:v", "1", path]);
  return path;
}

export async function mediaDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "ffedge-media-"));
}

/** ffprobe's JSON for a local file or URL; throws if ffprobe cannot read it. */
export async function probe(target: string): Promise<{ format: { duration?: string; format_name: string }; streams: { codec_type: string; codec_name: string; width?: number; height?: number }[] }> {
  const { stdout } = await run("ffprobe", ["-v", "error", "-show_format", "-show_streams", "-of", "json", target]);
  return JSON.parse(stdout);
}
