import type { OptionUse, ParsedCommand } from "../../shared/ffmpeg/index";

/** One `-progress` block: ffmpeg writes `key=value` lines and ends each block with `progress=`. */
export interface ProgressSnapshot {
  outTimeSeconds?: number;
  frame?: number;
  speed?: number;
  /** Bytes written so far. */
  totalSize?: number;
  /** `progress=end`: ffmpeg has finished writing. */
  end: boolean;
}

/**
 * Reads ffmpeg's `-progress pipe:1` stream, which arrives in arbitrary chunks, and calls
 * `onSnapshot` once per complete block.
 */
export class ProgressParser {
  private partial = "";
  private block = new Map<string, string>();

  constructor(private readonly onSnapshot: (snapshot: ProgressSnapshot) => void) {}

  push(chunk: Buffer | string): void {
    const lines = (this.partial + chunk.toString()).split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) this.line(line.trim());
  }

  private line(line: string): void {
    const equals = line.indexOf("=");
    if (equals <= 0) return;
    const key = line.slice(0, equals).trim();
    const value = line.slice(equals + 1).trim();
    if (key !== "progress") {
      this.block.set(key, value);
      return;
    }
    this.onSnapshot(snapshotOf(this.block, value === "end"));
    this.block = new Map();
  }
}

function snapshotOf(block: Map<string, string>, end: boolean): ProgressSnapshot {
  const snapshot: ProgressSnapshot = { end };
  const outTime = outTimeOf(block);
  if (outTime !== undefined) snapshot.outTimeSeconds = outTime;
  const frame = Number(block.get("frame"));
  if (block.has("frame") && Number.isInteger(frame) && frame >= 0) snapshot.frame = frame;
  const speed = Number.parseFloat(block.get("speed") ?? "");
  if (Number.isFinite(speed) && speed >= 0) snapshot.speed = speed;
  const totalSize = Number(block.get("total_size"));
  if (block.has("total_size") && Number.isInteger(totalSize) && totalSize >= 0) snapshot.totalSize = totalSize;
  return snapshot;
}

// Before anything is written ffmpeg reports N/A or a hugely negative time: both mean "unknown".
function outTimeOf(block: Map<string, string>): number | undefined {
  const micros = Number(block.get("out_time_us") ?? Number.NaN);
  if (Number.isFinite(micros)) return micros >= 0 ? micros / 1e6 : undefined;
  // `out_time_ms` is in microseconds too, despite its name (a long-standing ffmpeg quirk).
  const mislabelled = Number(block.get("out_time_ms") ?? Number.NaN);
  if (Number.isFinite(mislabelled)) return mislabelled >= 0 ? mislabelled / 1e6 : undefined;
  const clock = parseFfmpegTime(block.get("out_time") ?? "");
  return clock !== undefined && clock >= 0 ? clock : undefined;
}

/**
 * ffmpeg's time duration syntax: `[-][HH:]MM:SS[.m...]` or `[-]S+[.m...][s|ms|us]`.
 * https://ffmpeg.org/ffmpeg-utils.html#time-duration-syntax
 */
export function parseFfmpegTime(text: string): number | undefined {
  const clock = /^(-)?(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d*)?)$/.exec(text.trim());
  if (clock) {
    const [, minus, hours, minutes, seconds] = clock;
    const value = Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(seconds);
    return minus ? -value : value;
  }
  const plain = /^(-)?(\d+(?:\.\d*)?|\.\d+)(s|ms|us)?$/.exec(text.trim());
  if (!plain) return undefined;
  const [, minus, number, unit] = plain;
  const value = Number(number) / (unit === "ms" ? 1e3 : unit === "us" ? 1e6 : 1);
  return minus ? -value : value;
}

/** What the probe told about one input, as far as progress needs it. */
export interface InputTiming {
  durationSeconds?: number;
  /** Frame rate of the input's first video stream. */
  frameRate?: number;
}

/** What "100 %" means for one command: the longest output's duration, or else a frame count. */
export interface ProgressPlan {
  totalSeconds?: number;
  totalFrames?: number;
}

/**
 * Works out how long the outputs will be: each input's probed duration trimmed by its `-ss`,
 * `-sseof`, `-t`, `-to` and `-stream_loop`; then each output's `-ss`, `-t`, `-to` and frame
 * limits (`-frames:v`, `-vframes`, at the output's `-r` or the input's frame rate). ffmpeg's
 * `out_time` is that of the most advanced output stream, so the plan takes the longest output.
 */
export function planProgress(parsed: ParsedCommand, inputs: readonly InputTiming[]): ProgressPlan {
  const lengths = parsed.inputs.map((input, index) => inputLength(input.options, inputs[index]?.durationSeconds));
  const known = lengths.filter((length): length is number => length !== undefined);
  const inputFrameRate = inputs.find((input) => input.frameRate !== undefined)?.frameRate;
  let totalSeconds: number | undefined;
  let totalFrames: number | undefined;
  for (const output of parsed.outputs) {
    const base = known.length === 0 ? undefined : has(output.options, "shortest") ? Math.min(...known) : Math.max(...known);
    const frames = frameLimit(output.options);
    const rate = frameRateOf(output.options) ?? inputFrameRate;
    let length = outputLength(output.options, base);
    if (frames !== undefined && rate !== undefined) length = Math.min(length ?? Number.POSITIVE_INFINITY, frames / rate);
    if (length !== undefined) totalSeconds = Math.max(totalSeconds ?? 0, length);
    if (frames !== undefined) totalFrames = Math.max(totalFrames ?? 0, frames);
  }
  const plan: ProgressPlan = {};
  if (totalSeconds !== undefined && Number.isFinite(totalSeconds) && totalSeconds > 0) plan.totalSeconds = totalSeconds;
  if (totalFrames !== undefined && totalFrames > 0) plan.totalFrames = totalFrames;
  return plan;
}

/** Percent done for a snapshot, or undefined when the plan cannot tell. */
export function percentDone(snapshot: ProgressSnapshot, plan: ProgressPlan): number | undefined {
  if (snapshot.end) return 100;
  let fraction: number | undefined;
  if (plan.totalSeconds !== undefined && snapshot.outTimeSeconds !== undefined) fraction = snapshot.outTimeSeconds / plan.totalSeconds;
  else if (plan.totalFrames !== undefined && snapshot.frame !== undefined) fraction = snapshot.frame / plan.totalFrames;
  if (fraction === undefined) return undefined;
  return Math.round(Math.min(1, Math.max(0, fraction)) * 10_000) / 100;
}

function inputLength(options: readonly OptionUse[], duration: number | undefined): number | undefined {
  const loops = integer(value(options, "stream_loop"));
  // -stream_loop -1 repeats forever: only -t / -to can say when it ends.
  let full = duration === undefined || loops === -1 ? undefined : duration * (1 + Math.max(0, loops ?? 0));
  const sseof = time(options, "sseof");
  const start = sseof !== undefined && duration !== undefined ? Math.max(0, duration + sseof) : (time(options, "ss") ?? 0);
  if (full !== undefined) full = Math.max(0, full - start);
  const limit = time(options, "t");
  if (limit !== undefined) return Math.min(full ?? limit, limit);
  const end = time(options, "to");
  if (end !== undefined) return Math.min(full ?? Number.POSITIVE_INFINITY, Math.max(0, end - start));
  return full;
}

function outputLength(options: readonly OptionUse[], base: number | undefined): number | undefined {
  const start = time(options, "ss") ?? 0;
  const available = base === undefined ? undefined : Math.max(0, base - start);
  // -t wins over -to when both are given, as in ffmpeg.
  const limit = time(options, "t");
  if (limit !== undefined) return Math.min(available ?? limit, limit);
  const end = time(options, "to");
  if (end !== undefined) return Math.min(available ?? Number.POSITIVE_INFINITY, Math.max(0, end - start));
  return available;
}

function frameLimit(options: readonly OptionUse[]): number | undefined {
  for (const use of options) {
    const videoFrames = use.base === "vframes" || (use.base === "frames" && (use.name === "frames" || /^frames:v(:|$)/.test(use.name)));
    const frames = integer(use.value);
    if (videoFrames && frames !== undefined && frames > 0) return frames;
  }
  return undefined;
}

const NAMED_RATES: Record<string, number> = {
  ntsc: 30000 / 1001, pal: 25, qntsc: 30000 / 1001, qpal: 25, sntsc: 30000 / 1001, spal: 25, film: 24, "ntsc-film": 24000 / 1001,
};

/** `-r` of an output (any video stream specifier), as a number of frames per second. */
export function frameRateOf(options: readonly OptionUse[]): number | undefined {
  const raw = options.find((use) => use.base === "r" && (use.name === "r" || use.name.startsWith("r:v")))?.value;
  return raw === undefined ? undefined : parseRate(raw);
}

/** `25`, `29.97`, `30000/1001` or a named rate such as `ntsc`. */
export function parseRate(raw: string): number | undefined {
  const named = NAMED_RATES[raw.toLowerCase()];
  if (named !== undefined) return named;
  const [numerator, denominator = "1"] = raw.split("/");
  const rate = Number(numerator) / Number(denominator);
  return Number.isFinite(rate) && rate > 0 ? rate : undefined;
}

function value(options: readonly OptionUse[], base: string): string | undefined {
  // The last occurrence wins, as in ffmpeg.
  return options.findLast((use) => use.base === base)?.value;
}

function has(options: readonly OptionUse[], base: string): boolean {
  return options.some((use) => use.base === base);
}

function time(options: readonly OptionUse[], base: string): number | undefined {
  const raw = value(options, base);
  return raw === undefined ? undefined : parseFfmpegTime(raw);
}

function integer(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^-?\d+$/.test(raw.trim())) return undefined;
  return Number(raw);
}
