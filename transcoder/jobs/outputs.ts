import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import type { OptionUse, ParsedCommand } from "../../shared/ffmpeg/index";
import { outputMuxer } from "../../shared/ffmpeg/files";
import { DASH_SEGMENT_NAME } from "../../shared/ffmpeg/formats";
import { OPTIONS } from "../../shared/ffmpeg/options";
import { JobFailure } from "./failure";

export interface OutputFile {
  filename: string;
  path: string;
  size: number;
}

export interface OutputLimits {
  maxFiles: number;
  /** All outputs together. */
  maxBytes: number;
  /** Any one output: what the edge will store of one file. */
  maxFileBytes: number;
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
    if (info.size > limits.maxFileBytes) throw new JobFailure("OUTPUT_LIMIT_EXCEEDED", `The output '${filename}' grew past the limit of ${limits.maxFileBytes} bytes for one file.`);
    checkLimits(files.length, bytes, limits);
  }
  return files;
}

function checkLimits(files: number, bytes: number, limits: OutputLimits): void {
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

/** What a command declares it writes: its outputs, and the files its muxer options name. */
export interface DeclaredOutputs {
  /** The outputs as the command names them (patterns included), in command order. */
  names: string[];
  /** Every file name the command may publish: the outputs, their segments and side files. */
  matchers: RegExp[];
}

/**
 * The output names a command declares, and the files that go with them: names in options that
 * write files (`-hls_segment_filename`, `-segment_list`, `-master_pl_name`,
 * `-hls_fmp4_init_filename`), the HLS muxer's default segment and init names, and the dash
 * muxer's segments (it may use only its default names). Anything else
 * ffmpeg writes on its own (x264's `ffmpeg2pass-0.log` with `-flags +pass1`, temporary files)
 * is not an output and is never published.
 */
export function declaredOutputs(parsed: ParsedCommand): DeclaredOutputs {
  const names = parsed.outputs.map((output) => output.filename);
  const matchers: RegExp[] = [];
  for (const output of parsed.outputs) {
    matchers.push(nameMatcher(output.filename));
    for (const use of output.options) {
      if (use.value !== undefined && (OPTIONS[use.base]?.rewrite === "output-path" || SIDE_FILE_OPTIONS.has(use.base))) matchers.push(nameMatcher(use.value));
    }
    if (isHls(output.filename, output.options)) matchers.push(...hlsDefaults(output.filename, output.options));
    if (outputMuxer(output) === "dash") matchers.push(DASH_SEGMENT_NAME);
  }
  return { names, matchers };
}

export function onlyDeclared(declared: DeclaredOutputs, files: readonly OutputFile[]): OutputFile[] {
  return files.filter((file) => declared.matchers.some((matcher) => matcher.test(file.filename)));
}

/** Options naming a file written next to the output (checked by the policy as plain names). */
const SIDE_FILE_OPTIONS = new Set(["hls_fmp4_init_filename", "master_pl_name"]);

function isHls(filename: string, options: readonly OptionUse[]): boolean {
  const format = options.findLast((use) => use.base === "f")?.value;
  return format === undefined ? /\.m3u8$/i.test(filename) : format === "hls";
}

/**
 * Files the HLS muxer names by itself (libavformat/hlsenc.c): segments "<playlist stem>%d.ts"
 * (".m4s" for fMP4, no number with `single_file`) unless `-hls_segment_filename` names them,
 * and for fMP4 "init.mp4" (with a variant suffix when there are several streams) unless
 * `-hls_fmp4_init_filename` names it.
 */
function hlsDefaults(playlist: string, options: readonly OptionUse[]): RegExp[] {
  const value = (base: string) => options.findLast((use) => use.base === base)?.value;
  const fmp4 = value("hls_segment_type") === "fmp4";
  const single = (value("hls_flags") ?? "").split("+").includes("single_file");
  const stem = playlist.replace(/\.[^.]*$/, "");
  const defaults: RegExp[] = [];
  if (value("hls_segment_filename") === undefined) defaults.push(nameMatcher(`${stem}${single ? "" : "%d"}.${fmp4 ? "m4s" : "ts"}`));
  if (fmp4) {
    const init = value("hls_fmp4_init_filename") ?? "init.mp4";
    const dot = init.lastIndexOf(".");
    const [base, extension] = dot > 0 ? [init.slice(0, dot), init.slice(dot)] : [init, ""];
    defaults.push(nameMatcher(init), nameMatcher(`${base}_%d${extension}`));
  }
  return defaults;
}

function nameMatcher(name: string): RegExp {
  return sequencePattern(name) ?? new RegExp(`^${escapeRegExp(name)}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
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
    .map((part) => (part === "%%" ? "%" : /^%(0?\d*d|v)$/.test(part) ? "\\d+" : escapeRegExp(part)))
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
