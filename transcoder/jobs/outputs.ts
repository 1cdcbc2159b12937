import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { JobFailure } from "./failure";

export interface OutputFile {
  filename: string;
  path: string;
  size: number;
}

export interface OutputLimits {
  maxFiles: number;
  maxBytes: number;
}

/**
 * The regular files directly in `out/` (a symlink, directory or device ffmpeg may have been
 * tricked into making is never published), sorted by name. Throws OUTPUT_LIMIT_EXCEEDED past
 * the caps, so nothing partial is published.
 */
export async function collectOutputs(outDir: string, limits: OutputLimits): Promise<OutputFile[]> {
  const files: OutputFile[] = [];
  let bytes = 0;
  for (const filename of (await readdir(outDir)).sort()) {
    const file = path.join(outDir, filename);
    const info = await lstat(file);
    if (!info.isFile()) continue;
    files.push({ filename, path: file, size: info.size });
    bytes += info.size;
    checkLimits(files.length, bytes, limits);
  }
  return files;
}

export function checkLimits(files: number, bytes: number, limits: OutputLimits): void {
  if (files > limits.maxFiles) throw new JobFailure("OUTPUT_LIMIT_EXCEEDED", `The command produced more than ${limits.maxFiles} output files.`);
  if (bytes > limits.maxBytes) throw new JobFailure("OUTPUT_LIMIT_EXCEEDED", `The outputs grew past the limit of ${limits.maxBytes} bytes in total.`);
}

/**
 * Throws OUTPUT_MISSING for an output the command names that ffmpeg did not write. A name with
 * a sequence pattern (`seg_%03d.ts`) needs at least one file matching it.
 */
export function checkExpected(expected: readonly string[], files: readonly OutputFile[]): void {
  const names = files.map((file) => file.filename);
  for (const name of expected) {
    const pattern = sequencePattern(name);
    const found = pattern ? names.some((candidate) => pattern.test(candidate)) : names.includes(name);
    if (!found) throw new JobFailure("OUTPUT_MISSING", `ffmpeg finished without writing the output '${name}'.`);
  }
}

/**
 * The files in the order the command names its outputs (what clients expect `outputs[0]` to
 * be), then by name: a pattern's files, and extra files such as HLS segments, by name.
 */
export function inCommandOrder(expected: readonly string[], files: readonly OutputFile[]): OutputFile[] {
  const matchers = expected.map((name) => sequencePattern(name) ?? name);
  const rank = (filename: string) => {
    const index = matchers.findIndex((matcher) => (typeof matcher === "string" ? matcher === filename : matcher.test(filename)));
    return index < 0 ? matchers.length : index;
  };
  return [...files].sort((a, b) => rank(a.filename) - rank(b.filename) || a.filename.localeCompare(b.filename));
}

/**
 * `%d`, `%03d` (sequence numbers) and `%v` (HLS variant index) become digits and `%%` a literal
 * percent sign, as in ffmpeg's image, segment and HLS muxers.
 */
export function sequencePattern(name: string): RegExp | undefined {
  if (!name.includes("%")) return undefined;
  const source = name
    .split(/(%%|%0?\d*d|%v)/)
    .map((part) => (part === "%%" ? "%" : /^%(0?\d*d|v)$/.test(part) ? "\\d+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`);
}

/**
 * Watches `out/` while ffmpeg runs and calls `onExceeded` as soon as a cap is passed, so a
 * command filling the disk is stopped early rather than judged when it is done.
 */
export function watchOutputs(outDir: string, limits: OutputLimits, onExceeded: (failure: JobFailure) => void, intervalMs = 500): () => void {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      await collectOutputs(outDir, limits);
    } catch (error) {
      if (error instanceof JobFailure) onExceeded(error);
    } finally {
      busy = false;
    }
  }, intervalMs);
  return () => clearInterval(timer);
}

const CONTENT_TYPES: Record<string, string> = {
  mp4: "video/mp4", m4v: "video/mp4", mov: "video/quicktime", webm: "video/webm", mkv: "video/x-matroska", avi: "video/x-msvideo",
  ts: "video/mp2t", m2ts: "video/mp2t", flv: "video/x-flv", ogv: "video/ogg", "3gp": "video/3gpp", mpg: "video/mpeg", mpeg: "video/mpeg",
  m3u8: "application/vnd.apple.mpegurl", mpd: "application/dash+xml", m4s: "video/iso.segment",
  mp3: "audio/mpeg", m4a: "audio/mp4", aac: "audio/aac", wav: "audio/wav", flac: "audio/flac", ogg: "audio/ogg", oga: "audio/ogg",
  opus: "audio/opus", weba: "audio/webm",
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", webp: "image/webp", gif: "image/gif", bmp: "image/bmp", avif: "image/avif",
  srt: "application/x-subrip", vtt: "text/vtt", ass: "text/x-ssa",
};

export function contentTypeOf(filename: string): string {
  const extension = path.extname(filename).slice(1).toLowerCase();
  return CONTENT_TYPES[extension] ?? "application/octet-stream";
}
