/**
 * The vocabulary of the filter allow-list (filter-catalogue.ts): what a rule may say about a
 * filter, the caps that measure its options, and the rule fragments several filters share.
 */
import { between, type Variables } from "./expression";
import { type FrameRule, frameVariables, sizeOption } from "./filter-geometry";
import { type FilterOptions, LOWEST_SAMPLE_RATE } from "./filter-options";
import type { PolicyLimits } from "./limits";

/**
 * How the policy treats one allowed filter. A filter with no rule fields has no option that
 * opens a file, a device or a socket, so any arguments are fine (ffmpeg validates them).
 * Rules with constraints need `order` — ffmpeg's positional (shorthand) order of the filter's
 * options — because a bare argument sets whichever option stands at its position:
 * `drawtext=/etc/passwd` sets `fontfile`.
 */
export interface FilterRule {
  /** Option names in ffmpeg's shorthand order, as far as the rule needs them; later bare arguments are refused. */
  order?: readonly string[];
  /** Other spellings of the options above. */
  aliases?: Readonly<Record<string, string>>;
  /** Options that read or write files, with why: refused whatever their value. */
  refused?: Readonly<Record<string, string>>;
  /** The option that names a file to read: it must be one of the task's input URLs, and buildArgv points it at that input's local copy. */
  inputFile?: string;
  /** What that file must be: its URL's extension and, if the command forces one with `-f`, its format. */
  inputKind?: { extensions: ReadonlySet<string>; formats: ReadonlySet<string> };
  /**
   * Every option that sets a frame size, a frame or sample rate, or a count of pads, frames
   * or samples, with its cap, so the cap holds however the option is set (by name, alias or
   * position). The pinned-ffmpeg test fails on any such option of an allowed filter that is
   * neither here nor in `uncapped`.
   */
  measures?: Readonly<Record<string, Measure>>;
  /** Such options reviewed as needing no cap, with why. */
  uncapped?: Readonly<Record<string, string>>;
  /** The largest frame the filter outputs; without one, its first input's (see filter-geometry.ts). */
  frame?: FrameRule;
  check?: (options: FilterOptions) => void;
}

/** Caps one option that sets a size, rate or count. */
export type Measure = (options: FilterOptions, name: string) => void;

/** Inputs or outputs of one filter: each is a queue of frames, and ffmpeg allocates them up front. */
export const MAX_FILTER_PADS = 64;
/** Passes of a filter over each frame (boxblur's powers). */
const MAX_PASSES = 100;

export const FRAME_SIZE: Measure = (options, name) => options.capSize(name);
export const FRAME_RATE: Measure = (options, name) => {
  if (options.get(name) !== "auto") options.capRate(name);
};
const SAMPLE_RATE_VALUE: Measure = (options, name) => options.cap(name, options.limits.maxSampleRate, "samples per second");
export const SAMPLE_RATES: Measure = (options, name) => options.capSampleRates(name);
export const PADS: Measure = (options, name) => options.cap(name, MAX_FILTER_PADS, "inputs or outputs");
export const HELD_FRAMES: Measure = (options, name) => options.cap(name, options.limits.maxLoopFrames, "frames held in memory");
/** Samples in one audio frame: at most a second at the highest rate allowed. */
export const FRAME_SAMPLES: Measure = (options, name) =>
  options.cap(name, options.limits.maxSampleRate, "samples per frame", { n: between(0, options.limits.maxFrames), pts: between(0, Number.MAX_SAFE_INTEGER), t: between(0, options.limits.maxDurationSeconds), TB: between(0, 1) });
export const SAMPLES: Measure = (options, name) => options.capSamples(name);
export const PASSES: Measure = (options, name) => options.cap(name, MAX_PASSES, "passes over each frame");
/** Drawn sizes (font size, borders): no larger than a frame may be. */
export const DRAWN_SIZE: Measure = (options, name) => options.cap(name, Math.max(options.limits.maxWidth, options.limits.maxHeight), "pixels", frameVariables(options.limits));
/** Capped by the rule's `check` or `frame`, which read it together with other options. */
export const IN_CHECK: Measure = () => {};
/** A grid of cells (tile, xstack): each cell is a frame held in memory. */
export const GRID: Measure = (options, name) => options.capTileLayout(name);

export const SAFE: FilterRule = {};

export const READS_FILE = "reads a file from the transcoder's disk";
export const WRITES_FILE = "writes a file outside the task's outputs";

/**
 * Source filters make media from nothing. They are allowed (tests patterns, silence to pad a
 * track, a background colour) with capped sizes and rates; one without a duration runs until
 * an output stops it, so such a command needs `-t`, `-to`, `-frames` or `-shortest` on every
 * output (see PolicyNotes.unbounded).
 */
export const VIDEO_SOURCE: FilterRule = {
  order: ["size", "rate", "duration", "sar"],
  aliases: { s: "size", r: "rate", d: "duration" },
  measures: { size: FRAME_SIZE, rate: FRAME_RATE },
  uncapped: { sar: "the pixel shape, not the frame's size" },
  frame: sizeOption("size", "320x240"),
  check: (options) => options.boundedDuration("duration"),
};

export const AUDIO_SOURCE = (order: readonly string[], aliases: Record<string, string>, measures: Record<string, Measure> = {}): FilterRule => ({
  order,
  aliases,
  measures: { sample_rate: SAMPLE_RATE_VALUE, ...measures },
  check: (options) => options.boundedDuration("duration"),
});

export const SAMPLE_RATE: FilterRule = {
  order: ["sample_rate"],
  // aresample also takes libswresample's own spellings of the output rate.
  aliases: { r: "sample_rate", osr: "sample_rate", out_sample_rate: "sample_rate" },
  measures: { sample_rate: SAMPLE_RATE_VALUE },
};

export const LOOP: FilterRule = {
  order: ["loop", "size", "start"],
  measures: { loop: IN_CHECK, size: IN_CHECK },
  check: (options) => {
    const loops = options.integer("loop");
    if (loops !== undefined && loops < 0) throw options.limit("loop", "repeats forever; give a number of repeats");
    options.cap("loop", options.limits.maxLoops, "repeats");
  },
};

export const SUBTITLES_COMMON = { fontsdir: READS_FILE } as const;

/**
 * `subtitles=` opens its file with libavformat's probe, whatever the file holds; the
 * transcoder checks the bytes, and the command may only point it at a subtitle file by name,
 * read (if it forces a format) as one.
 */
export const SUBTITLE_FILE = { extensions: new Set(["srt", "ass", "ssa", "vtt"]), formats: new Set(["srt", "ass", "webvtt"]) };
export const ASS_FILE = { extensions: new Set(["ass", "ssa"]), formats: new Set(["ass"]) };

/** Output frames zoompan may make of one input frame before its output needs -t, -to or -frames (a minute at 25 fps). */
export const ZOOMPAN_FRAMES_WITHOUT_BOUND = 1500;

/** zoompan's per-frame variables (its `d` is an expression of them). */
export function zoompanVariables(limits: PolicyLimits): Variables {
  const frames = between(0, limits.maxFrames);
  const time = between(0, limits.maxDurationSeconds);
  const position = between(0, Math.max(limits.maxWidth, limits.maxHeight));
  const zoom = between(1, 10);
  return {
    ...frameVariables(limits), out_w: between(1, limits.maxWidth), ow: between(1, limits.maxWidth), out_h: between(1, limits.maxHeight), oh: between(1, limits.maxHeight),
    in: frames, on: frames, frame: frames, duration: frames, pduration: frames, in_time: time, it: time, out_time: time, time, ot: time,
    zoom, pzoom: zoom, x: position, px: position, y: position, py: position,
  };
}

/** A size given as width and height options, each an expression of the input's size. */
export function outputSize(width: string, height: string): (options: FilterOptions) => void {
  return (options) => options.capDimensions(width, height, frameVariables(options.limits));
}

/**
 * `adelay=delays=1500|0|500`: per channel, milliseconds, or seconds with `s`, or samples with
 * `S`. af_adelay.c reads an integer and the character after it, then the number again with
 * `%f` (which also takes `inf` and hex floats): only plain decimals are accepted here, and
 * the longest delay must fit the duration cap.
 */
export function checkDelays(options: FilterOptions): void {
  const delays = options.get("delays");
  if (delays === undefined) return;
  for (const delay of delays.split("|")) {
    const match = /^(\d{1,15})((?:\.\d*)?(?:[eE][+-]?\d{1,3})?)([sS]?)$/.exec(delay);
    if (!match) throw options.invalid("delays", "delays such as 1500|0|500 (milliseconds), 1.5s|0 or 48000S|0 (samples)");
    const [, whole, fraction, unit] = match;
    const seconds = unit === "S" && fraction === "" ? Number(whole) / LOWEST_SAMPLE_RATE : Number(whole! + fraction) / (unit === "s" && fraction === "" ? 1 : 1000);
    if (!(seconds <= options.limits.maxDurationSeconds)) {
      throw options.limit("delays", `delays by ${Math.round(seconds)} s; the limit is ${options.limits.maxDurationSeconds} seconds`);
    }
  }
}

