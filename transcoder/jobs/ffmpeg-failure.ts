import type { ParsedCommand } from "../../shared/ffmpeg/index";
import type { FileFacts } from "../ffmpeg/stream-info";
import { describe } from "../lib/guarded-fetch";
import type { RunResult } from "../sandbox/process";
import { JobFailure } from "./failure";

/** The most a task's `error` says; the whole stderr is in GET /v1/tasks/{id}/logs. */
export const MAX_CAUSE_LENGTH = 300;

/** Banners: every indented line belongs to the input, output or mapping description above it. */
const DESCRIPTION = /^\s|^(Input|Output) #\d+|^Stream mapping:|^Press \[q\]|^(frame|size)=|^video:\S+ audio:/;

/**
 * What ffmpeg prints after the cause, whatever the cause was: these lines end the search and
 * are never the answer while a more specific line precedes them.
 */
const CONSEQUENCE = new RegExp(
  [
    "^Conversion failed!",
    "^Error reinitializing filters!",
    "^Failed to inject frame into filter network",
    "^Error while processing the decoded data for stream",
    "^Error initializing output stream",
    "^Error while opening encoder for output stream",
    "^Could not write header for output file",
    "^Failed to configure (input|output) pad",
    "^Error while filtering",
    "^Error opening output files:",
    "^Error (initializing|configuring) (complex )?filters",
  ].join("|"),
);

/** ffmpeg's own ways of saying what went wrong. */
const CAUSE =
  /matches no streams|unknown|unrecognized|invalid|no such|not found|does not|doesn't|cannot|can't|could not|couldn't|unable|not supported|unsupported|not a suitable|are supported|undefined constant|too (big|large|small|many|few)|out of range|incorrect|not allowed|mismatch|must be|requires?\b|missing|failed|error/i;

/** Advice ffmpeg prints right after a cause ("To ignore this, add a trailing '?' to the map."). */
const HINT = /^To ignore this|^Possible \w+:|^Did you mean/;

interface Exit {
  code: number | null;
  signal: string | null;
}

/**
 * A failed task's `error`: the line(s) of ffmpeg's stderr that say what went wrong, with the
 * advice that follows them, at most MAX_CAUSE_LENGTH characters. `stderr` already has the job's
 * local paths replaced (inputs by "input N", outputs by their names).
 *
 * @example
 * ffmpegFailure("Stream map '0:9' matches no streams.\nTo ignore this, add a trailing '?' to the map.\n", { code: 1, signal: null });
 * // "Stream map '0:9' matches no streams. To ignore this, add a trailing '?' to the map."
 */
export function ffmpegFailure(stderr: string, exit: Exit): string {
  if (exit.signal) return `ffmpeg was killed by ${exit.signal}.`;
  const lines = stderr
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "" && !DESCRIPTION.test(line))
    .map(plain);
  const anchor = lines.findIndex((line) => CONSEQUENCE.test(line.text));
  const before = anchor < 0 ? lines : lines.slice(0, anchor);
  const block = causeBlock(before);
  if (block.length > 0) return sentences(block);
  const fallback = lines[anchor] ?? before.at(-1);
  if (fallback && !/^Conversion failed!/.test(fallback.text)) return sentences([fallback]);
  return `ffmpeg exited with code ${exit.code}.`;
}

interface Line {
  /** Who said it (an encoder, a muxer, a filter), when ffmpeg names one. */
  source?: string;
  text: string;
}

/**
 * The last run of telling lines before the end that holds at least one cause, each line once.
 * A line is telling when it states a cause or gives advice, or when it continues what the same
 * component said on the line before ("[image2] The specified filename … / [image2] Use a pattern …").
 */
function causeBlock(lines: readonly Line[]): Line[] {
  const telling = lines.map((line) => CAUSE.test(line.text) || HINT.test(line.text));
  for (let index = 1; index < lines.length; index++) {
    const source = lines[index]!.source;
    telling[index] ||= telling[index - 1]! && source !== undefined && source === lines[index - 1]!.source;
  }
  let block: Line[] = [];
  for (let index = lines.length - 1; index >= 0; index--) {
    if (telling[index]) {
      block.unshift(lines[index]!);
      continue;
    }
    if (block.some(isCause)) break;
    block = [];
  }
  // A run can only begin with its cause: advice before it belongs to an earlier message.
  while (block.length > 0 && !isCause(block[0]!)) block.shift();
  const seen = new Set<string>();
  return block.filter((line) => !seen.has(line.text) && seen.add(line.text));
}

function isCause(line: Line): boolean {
  return CAUSE.test(line.text) && !HINT.test(line.text);
}

/**
 * A line without ffmpeg's context prefixes: "[Parsed_scale_0 @ 0x5…] [Eval @ 0x7…] text" is
 * said by the scale filter, "[NULL @ 0x5…] text" by nobody in particular, "x264 [error]: text" by x264.
 */
function plain(raw: string): Line {
  let text = raw.trim();
  let source: string | undefined;
  const library = /^(\w+) \[(error|warning|info)\]: (.*)$/.exec(text);
  if (library) return { source: library[1], text: library[3]! };
  for (let prefix = /^\[([^\]@]+?) @ 0x[0-9a-f]+\]\s*/i.exec(text); prefix; prefix = /^\[([^\]@]+?) @ 0x[0-9a-f]+\]\s*/i.exec(text)) {
    source ??= sourceName(prefix[1]!);
    text = text.slice(prefix[0].length);
  }
  return { source, text };
}

function sourceName(context: string): string | undefined {
  const filter = /^Parsed_(\w+?)_\d+$/.exec(context);
  if (filter) return filter[1];
  if (/^(AVFilterGraph|NULL|Eval|AVIOContext|SWR|swscaler|graph[ _].*)$/i.test(context)) return undefined;
  // ffmpeg 6+ names streams and files ("vost#0:0/libx264", "out#0/mp4"): the codec or format is the useful part.
  const named = context.includes("/") ? context.slice(context.lastIndexOf("/") + 1) : context;
  return named.includes("#") ? undefined : named;
}

/** The lines as sentences, as many whole ones as fit in MAX_CAUSE_LENGTH (the first always, cut if it must be). */
function sentences(lines: readonly Line[]): string {
  let out = "";
  for (const [index, line] of lines.entries()) {
    const said = line.source && !line.text.startsWith(`${line.source}:`) && lines[index - 1]?.source !== line.source ? `${line.source}: ${line.text}` : line.text;
    const sentence = /[.!?]$/.test(said) ? said : `${said}.`;
    const next = out ? `${out} ${sentence}` : sentence;
    if (next.length > MAX_CAUSE_LENGTH) return out || `${sentence.slice(0, MAX_CAUSE_LENGTH - 1)}…`;
    out = next;
  }
  return out;
}

/**
 * ffmpeg could not open an input (it prints "<path>: <reason>" and no description of it): its
 * bytes are not in an accepted format. Undefined when the failure was something else.
 */
export function unreadableInput(result: RunResult, described: readonly (FileFacts | undefined)[], parsed: ParsedCommand, inputPaths: readonly string[]): JobFailure | undefined {
  const index = inputPaths.findIndex((file, position) => described[position] === undefined && result.stderr.split("\n").some((line) => line.startsWith(`${file}: `)));
  if (index < 0) return undefined;
  const label = `Input ${index + 1} (${describe(parsed.inputs[index]!.url)})`;
  return new JobFailure(
    "INPUT_FORMAT_NOT_ALLOWED",
    /not on whitelist/i.test(result.stderr)
      ? `${label} is not in a format the service accepts (playlists, concat scripts, devices and generators are refused).`
      : `${label} could not be read as audio, video, an image or subtitles.`,
  );
}
