import { AppError, type ErrorCode } from "../errors";
import { checkFetchUrl, type UrlPolicyOptions } from "../net/url-policy";
import { EXTENSION_MUXERS, MUXER_EXTENSIONS, OUTPUT_EXTENSIONS, PLAYLIST_EXTENSIONS, SEGMENT_MUXERS } from "./formats";
import { hasControlCharacter, quote, refuse } from "./refusal";
import type { OutputSpec } from "./types";

export const MAX_OUTPUT_NAME_LENGTH = 128;

/**
 * Inputs are http(s) URLs, downloaded by the service before ffmpeg starts and handed to it as
 * local files; every other scheme, protocol wrapper (`concat:`, `subfile,,`, `async:`...) and
 * local path is refused. The host must pass the same URL policy the downloaders apply (so a
 * blocked address is refused at submission, not at download); what a name resolves to is the
 * downloader's check at connect time.
 */
export function checkInputUrl(url: string, urlPolicy: UrlPolicyOptions = {}): void {
  if (hasControlCharacter(url) || /\s/.test(url)) throw inputRefused(url, "contains whitespace or control characters; percent-encode them");
  if (!/^https?:\/\//i.test(url)) throw inputRefused(url, "is not an http(s) URL; inputs must be http or https URLs, which the service downloads before ffmpeg runs");
  let parsed: URL;
  try {
    parsed = checkFetchUrl(url, urlPolicy);
  } catch (error) {
    if (error instanceof AppError && error.code.startsWith("URL_")) throw refuse(error.code, url, `Input refused: ${error.detail}`);
    throw error;
  }
  const extension = extensionOf(decodeSafely(parsed.pathname));
  if (PLAYLIST_EXTENSIONS.has(extension)) {
    throw inputRefused(url, `is a .${extension} playlist or script, which names other files; give the media file itself`);
  }
}

/** The file name an input URL ends with, which no output may reuse. */
export function inputFileName(url: string): string | undefined {
  try {
    return decodeSafely(new URL(url).pathname).split("/").pop() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A file ffmpeg writes — an output, or a segment, playlist or list an option names. It must
 * be a plain name (it is placed in the job's output directory), ASCII, with a media
 * extension; `%d` / `%03d` and HLS's `%v` are allowed for sequences, nothing else with `%`
 * (strftime patterns and `%s` would make names we cannot predict).
 */
export function checkOutputName(name: string, code: ErrorCode = "OUTPUT_NOT_ALLOWED"): void {
  const problem = outputNameProblem(name);
  if (problem) throw refuse(code, name, `The output name ${quote(name)} ${problem}.`);
}

function outputNameProblem(name: string): string | undefined {
  if (name.length === 0) return "is empty";
  if (name.length > MAX_OUTPUT_NAME_LENGTH) return `is ${name.length} characters long; the limit is ${MAX_OUTPUT_NAME_LENGTH}`;
  if (hasControlCharacter(name)) return "contains control characters";
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(name)) return "is a URL; outputs are files the service stores and serves";
  if (/[/\\]/.test(name)) return "is a path; give a plain file name, it is written to the task's output folder";
  if (name.startsWith(".")) return "starts with a dot";
  if (name.includes("..")) return "contains '..'";
  if (!/^[A-Za-z0-9_%][A-Za-z0-9_.%-]*$/.test(name)) return "may only use ASCII letters, digits, '_', '-' and '.'";
  const rest = name.replace(/%0[1-9]d|%d|%v/g, "");
  if (rest.includes("%")) return "has a '%' pattern other than %d, %03d (image and segment numbers) or %v (HLS variants)";
  if ((name.match(/%0[1-9]d|%d/g) ?? []).length > 1) return "has more than one number pattern";
  const extension = extensionOf(name);
  if (!OUTPUT_EXTENSIONS.has(extension)) return `does not end with an allowed extension (${[...OUTPUT_EXTENSIONS].join(", ")})`;
  return undefined;
}

/** The muxer that writes an output: the one `-f` names, else the one ffmpeg picks by its extension. */
export function outputMuxer(output: OutputSpec): string | undefined {
  return output.options.findLast((use) => use.base === "f")?.value ?? EXTENSION_MUXERS[extensionOf(output.filename)];
}

/**
 * An output's name says what is in it (the CDN serves it with that extension's type): a muxer
 * forced with `-f` (or a segment format) must be one that writes files with the output's
 * extension. A segment muxer writes single files, never playlists.
 */
export function checkOutputContainer(output: OutputSpec): void {
  const value = (base: string) => output.options.findLast((use) => use.base === base)?.value;
  const forced = value("f");
  if (forced === undefined) return;
  const extension = extensionOf(output.filename);
  const format = SEGMENT_MUXERS.has(forced) ? value("segment_format") : forced;
  if (format === undefined) {
    const guessed = EXTENSION_MUXERS[extension];
    if (guessed === "hls" || guessed === "dash") throw refuse("OUTPUT_NOT_ALLOWED", output.filename, `'-f ${forced}' writes single-file segments, not a .${extension} playlist; name the segments with a media extension (such as 'part_%03d.ts'), or drop '-f ${forced}' for a .${extension} output.`);
    return;
  }
  const extensions = MUXER_EXTENSIONS[format] ?? [];
  if (!extensions.includes(extension)) {
    const how = format === forced ? `'-f ${forced}'` : `'-segment_format ${format}'`;
    throw refuse("OUTPUT_NOT_ALLOWED", output.filename, `The output ${quote(output.filename)} is written as ${how}, whose files end in ${extensions.map((each) => `.${each}`).join(", ")}; name it with one of those, or drop the option and let the name choose the format.`);
  }
}

/** The part after the last dot, lower-cased ("" without one). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot === -1 ? "" : name.slice(dot + 1).toLowerCase();
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function inputRefused(url: string, why: string): Error {
  return refuse("INPUT_NOT_ALLOWED", url, `The input ${quote(url)} ${why}.`);
}
