import type { GraphContext } from "./context";
import {
  type FilterArgument,
  type FilterGraph,
  type FilterNode,
  parseFilterArguments,
  parseFilterGraph,
  serializeFilterArguments,
  serializeFilterGraph,
} from "./filter-graph";
import { between, type Range, type Variables } from "./expression";
import { aspectFit, cropped, expressedSize, type FrameBound, type FrameRule, frameVariables, padded, sameAsInput, scaled, sizeOption, stacked, tiled, transposed, xstacked } from "./filter-geometry";
import { FilterOptions, LOWEST_SAMPLE_RATE } from "./filter-options";
import type { PolicyLimits } from "./limits";
import { quote, refuse } from "./refusal";
import type { VideoSize } from "./values";

/**
 * How the policy treats one allowed filter. A filter with no rule fields has no option that
 * opens a file, a device or a socket, so any arguments are fine (ffmpeg validates them).
 * Rules with constraints need `order` — ffmpeg's positional (shorthand) order of the filter's
 * options — because a bare argument sets whichever option stands at its position:
 * `drawtext=/etc/passwd` sets `fontfile`.
 */
interface FilterRule {
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
type Measure = (options: FilterOptions, name: string) => void;

/** Inputs or outputs of one filter: each is a queue of frames, and ffmpeg allocates them up front. */
const MAX_FILTER_PADS = 64;
/** Passes of a filter over each frame (boxblur's powers). */
const MAX_PASSES = 100;

const FRAME_SIZE: Measure = (options, name) => options.capSize(name);
const FRAME_RATE: Measure = (options, name) => {
  if (options.get(name) !== "auto") options.capRate(name);
};
const SAMPLE_RATE_VALUE: Measure = (options, name) => options.cap(name, options.limits.maxSampleRate, "samples per second");
const SAMPLE_RATES: Measure = (options, name) => options.capSampleRates(name);
const PADS: Measure = (options, name) => options.cap(name, MAX_FILTER_PADS, "inputs or outputs");
const HELD_FRAMES: Measure = (options, name) => options.cap(name, options.limits.maxLoopFrames, "frames held in memory");
/** Samples in one audio frame: at most a second at the highest rate allowed. */
const FRAME_SAMPLES: Measure = (options, name) =>
  options.cap(name, options.limits.maxSampleRate, "samples per frame", { n: between(0, options.limits.maxFrames), pts: between(0, Number.MAX_SAFE_INTEGER), t: between(0, options.limits.maxDurationSeconds), TB: between(0, 1) });
const SAMPLES: Measure = (options, name) => options.capSamples(name);
const PASSES: Measure = (options, name) => options.cap(name, MAX_PASSES, "passes over each frame");
/** Drawn sizes (font size, borders): no larger than a frame may be. */
const DRAWN_SIZE: Measure = (options, name) => options.cap(name, Math.max(options.limits.maxWidth, options.limits.maxHeight), "pixels", frameVariables(options.limits));
/** Capped by the rule's `check` or `frame`, which read it together with other options. */
const IN_CHECK: Measure = () => {};
/** A grid of cells (tile, xstack): each cell is a frame held in memory. */
const GRID: Measure = (options, name) => options.capTileLayout(name);

const SAFE: FilterRule = {};

const READS_FILE = "reads a file from the transcoder's disk";
const WRITES_FILE = "writes a file outside the task's outputs";

/**
 * Source filters make media from nothing. They are allowed (tests patterns, silence to pad a
 * track, a background colour) with capped sizes and rates; one without a duration runs until
 * an output stops it, so such a command needs `-t`, `-to`, `-frames` or `-shortest` on every
 * output (see PolicyNotes.unbounded).
 */
const VIDEO_SOURCE: FilterRule = {
  order: ["size", "rate", "duration", "sar"],
  aliases: { s: "size", r: "rate", d: "duration" },
  measures: { size: FRAME_SIZE, rate: FRAME_RATE },
  uncapped: { sar: "the pixel shape, not the frame's size" },
  frame: sizeOption("size", "320x240"),
  check: (options) => options.boundedDuration("duration"),
};

const AUDIO_SOURCE = (order: readonly string[], aliases: Record<string, string>, measures: Record<string, Measure> = {}): FilterRule => ({
  order,
  aliases,
  measures: { sample_rate: SAMPLE_RATE_VALUE, ...measures },
  check: (options) => options.boundedDuration("duration"),
});

const SAMPLE_RATE: FilterRule = {
  order: ["sample_rate"],
  // aresample also takes libswresample's own spellings of the output rate.
  aliases: { r: "sample_rate", osr: "sample_rate", out_sample_rate: "sample_rate" },
  measures: { sample_rate: SAMPLE_RATE_VALUE },
};

const LOOP: FilterRule = {
  order: ["loop", "size", "start"],
  measures: { loop: IN_CHECK, size: IN_CHECK },
  check: (options) => {
    const loops = options.integer("loop");
    if (loops !== undefined && loops < 0) throw options.limit("loop", "repeats forever; give a number of repeats");
    options.cap("loop", options.limits.maxLoops, "repeats");
  },
};

const SUBTITLES_COMMON = { fontsdir: READS_FILE } as const;

/**
 * `subtitles=` opens its file with libavformat's probe, whatever the file holds; the
 * transcoder checks the bytes, and the command may only point it at a subtitle file by name,
 * read (if it forces a format) as one.
 */
const SUBTITLE_FILE = { extensions: new Set(["srt", "ass", "ssa", "vtt"]), formats: new Set(["srt", "ass", "webvtt"]) };
const ASS_FILE = { extensions: new Set(["ass", "ssa"]), formats: new Set(["ass"]) };

/** Output frames zoompan may make of one input frame before its output needs -t, -to or -frames (a minute at 25 fps). */
const ZOOMPAN_FRAMES_WITHOUT_BOUND = 1500;

/** zoompan's per-frame variables (its `d` is an expression of them). */
function zoompanVariables(limits: PolicyLimits): Variables {
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
function outputSize(width: string, height: string): (options: FilterOptions) => void {
  return (options) => options.capDimensions(width, height, frameVariables(options.limits));
}

/**
 * `adelay=delays=1500|0|500`: per channel, milliseconds, or seconds with `s`, or samples with
 * `S`. af_adelay.c reads an integer and the character after it, then the number again with
 * `%f` (which also takes `inf` and hex floats): only plain decimals are accepted here, and
 * the longest delay must fit the duration cap.
 */
function checkDelays(options: FilterOptions): void {
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

/** The allow-list: any filter not named here is refused. */
const FILTERS: Readonly<Record<string, FilterRule>> = {
  // geometry and timing
  scale: {
    order: ["w", "h", "flags"],
    aliases: { width: "w", height: "h", s: "size" },
    measures: { w: IN_CHECK, h: IN_CHECK },
    frame: scaled,
    check: (options) => {
      aspectFit(options);
      options.integer("force_divisible_by");
      // ffmpeg reads a lone width as a size (`scale=1280x720`, `scale=hd720`).
      if (options.has("w") && !options.has("h")) options.capSize("w");
      else outputSize("w", "h")(options);
      options.capSize("size");
    },
  },
  zscale: {
    order: ["w", "h", "size"],
    aliases: { width: "w", height: "h", s: "size" },
    measures: { w: IN_CHECK, h: IN_CHECK, size: IN_CHECK },
    uncapped: { param_a: "a scaler coefficient" },
    frame: (options, inputs, known) => sizeOption("size", "")(options, inputs, known) ?? expressedSize("w", "h")(options, inputs, known),
    check: (options) => {
      options.capSize("size");
      outputSize("w", "h")(options);
    },
  },
  pad: {
    order: ["width", "height", "x", "y", "color", "eval", "aspect"],
    aliases: { w: "width", h: "height" },
    measures: { width: IN_CHECK, height: IN_CHECK, aspect: IN_CHECK },
    frame: padded,
    check: (options) => {
      // vf_pad.c divides `aspect` by the frame's pixel shape, which setsar, setdar or the input file set freely: it has no bound.
      if (options.has("aspect") && options.ratio("aspect")?.hi !== 0) throw options.invalid("aspect", "no value: it grows the frame by the frame's pixel shape, which has no bound; give the width and height");
      outputSize("width", "height")(options);
    },
  },
  rotate: {
    order: ["angle", "out_w", "out_h", "fillcolor", "bilinear"],
    aliases: { a: "angle", ow: "out_w", oh: "out_h", c: "fillcolor" },
    measures: { out_w: IN_CHECK, out_h: IN_CHECK },
    // Its size may follow from the angle (rotw, roth); its check bounds it with the largest input.
    frame: () => undefined,
    check: (options) => {
      // rotw(a) and roth(a) are the bounding box of the input rotated by a: at most iw+ih.
      const { maxWidth, maxHeight } = options.limits;
      const box = (across: number, along: number) => ({
        arity: [1],
        apply: ([angle]: Range[]) => (angle!.lo === angle!.hi ? between(0, across * Math.abs(Math.cos(angle!.lo)) + along * Math.abs(Math.sin(angle!.lo))) : between(0, maxWidth + maxHeight)),
      });
      options.capDimensions("out_w", "out_h", frameVariables(options.limits), { rotw: box(maxWidth, maxHeight), roth: box(maxHeight, maxWidth) });
    },
  },
  crop: {
    order: ["out_w", "out_h", "x", "y", "keep_aspect", "exact"],
    aliases: { w: "out_w", h: "out_h" },
    uncapped: { out_w: "a crop is never larger than its input", out_h: "a crop is never larger than its input" },
    frame: cropped,
  },
  transpose: { frame: transposed }, hflip: SAFE, vflip: SAFE,
  setsar: { uncapped: { sar: "the pixel shape, not the frame's size" } },
  setdar: { uncapped: { dar: "the display shape, not the frame's size" } },
  setpts: SAFE, asetpts: SAFE, settb: SAFE, asettb: SAFE,
  trim: { uncapped: { start_frame: "drops frames", end_frame: "drops frames" } },
  atrim: { uncapped: { start_sample: "drops samples", end_sample: "drops samples" } },
  select: { order: ["expr", "outputs"], aliases: { e: "expr", n: "outputs" }, measures: { outputs: PADS }, uncapped: { expr: "chooses frames" } },
  aselect: { order: ["expr", "outputs"], aliases: { e: "expr", n: "outputs" }, measures: { outputs: PADS }, uncapped: { expr: "chooses frames" } },
  fps: { order: ["fps", "start_time", "round", "eof_action"], measures: { fps: FRAME_RATE } },
  framerate: { order: ["fps", "interp_start", "interp_end", "scene", "flags"], measures: { fps: FRAME_RATE } },
  minterpolate: { order: ["fps", "mi_mode", "mc_mode", "me_mode", "me", "mb_size", "search_param", "vsbmc", "scd", "scd_threshold"], measures: { fps: FRAME_RATE } },
  reverse: SAFE, areverse: SAFE, framestep: SAFE,
  mpdecimate: { uncapped: { max: "counts dropped frames" } },
  decimate: SAFE,
  thumbnail: { order: ["n"], measures: { n: HELD_FRAMES } },
  loop: {
    ...LOOP,
    check: (options) => {
      LOOP.check!(options);
      options.cap("size", options.limits.maxLoopFrames, "frames held in memory");
    },
  },
  aloop: {
    ...LOOP,
    check: (options) => {
      LOOP.check!(options);
      options.cap("size", options.limits.maxLoopSamples, "samples held in memory");
    },
  },
  tpad: {
    order: ["start", "stop", "start_mode", "stop_mode", "start_duration", "stop_duration", "color"],
    measures: { start: IN_CHECK, stop: IN_CHECK },
    check: (options) => {
      options.cap("start", options.limits.maxFrames, "frames");
      if (options.integer("stop") === -1) options.markUnbounded();
      else options.cap("stop", options.limits.maxFrames, "frames");
      options.capDuration("start_duration");
      options.capDuration("stop_duration");
    },
  },
  apad: {
    order: ["packet_size", "pad_len", "whole_len", "pad_dur", "whole_dur"],
    measures: { packet_size: FRAME_SAMPLES, pad_len: IN_CHECK, whole_len: IN_CHECK },
    check: (options) => {
      // A length that may be 0 or less means "no limit": apad then pads forever.
      const lengths = ["pad_len", "whole_len"].map((name) => options.capSamples(name)?.lo ?? -1);
      const durations = ["pad_dur", "whole_dur"].map((name) => options.capDuration(name) ?? -1);
      if ([...lengths, ...durations].every((amount) => amount <= 0)) options.markUnbounded();
    },
  },
  concat: { order: ["n", "v", "a", "unsafe"], measures: { n: PADS, v: PADS, a: PADS } },
  split: { order: ["outputs"], measures: { outputs: PADS } },
  asplit: { order: ["outputs"], measures: { outputs: PADS } },
  null: SAFE, anull: SAFE, copy: SAFE, acopy: SAFE, fifo: SAFE, afifo: SAFE,
  format: SAFE,
  aformat: { order: ["sample_fmts", "sample_rates", "channel_layouts"], aliases: { f: "sample_fmts", r: "sample_rates", cl: "channel_layouts" }, measures: { sample_rates: SAMPLE_RATES } },
  setparams: SAFE, setfield: SAFE, fieldorder: SAFE, yadif: SAFE, bwdif: SAFE,
  // composition
  overlay: SAFE,
  hstack: { order: ["inputs", "shortest"], measures: { inputs: PADS }, frame: stacked("horizontal") },
  vstack: { order: ["inputs", "shortest"], measures: { inputs: PADS }, frame: stacked("vertical") },
  xstack: { order: ["inputs", "layout", "grid", "shortest", "fill"], measures: { inputs: PADS, layout: IN_CHECK, grid: GRID }, frame: xstacked },
  blend: SAFE, xfade: SAFE, alphamerge: SAFE,
  alphaextract: SAFE, colorkey: SAFE, chromakey: SAFE, haldclut: SAFE,
  tile: {
    order: ["layout", "nb_frames", "margin", "padding", "color", "overlap", "init_padding"],
    measures: { layout: GRID, margin: IN_CHECK, padding: IN_CHECK },
    uncapped: { nb_frames: "ffmpeg keeps it within the layout's cells", overlap: "ffmpeg keeps it within the layout's cells", init_padding: "ffmpeg keeps it within the layout's cells" },
    frame: tiled,
  },
  zoompan: {
    order: ["zoom", "x", "y", "d", "s", "fps"],
    aliases: { z: "zoom" },
    measures: { s: IN_CHECK, fps: IN_CHECK, d: IN_CHECK },
    frame: sizeOption("s", "hd720"),
    check: (options) => {
      // Every input frame becomes d output frames (90 unless set). A photo's Ken Burns pan (d of a
      // few hundred, no -t) is the filter's everyday use and ends with its input; a d that could
      // stretch each frame past a minute needs a bounded output.
      const frames = options.cap("d", options.limits.maxFrames, "frames", zoompanVariables(options.limits));
      if ((frames?.hi ?? 90) > ZOOMPAN_FRAMES_WITHOUT_BOUND) options.markUnbounded();
      options.capSize("s");
      options.capRate("fps");
    },
  },
  // picture
  fade: { uncapped: { start_frame: "counts frames it fades", nb_frames: "counts frames it fades", start_time: "a time, not a length" } },
  eq: SAFE, hue: SAFE, colorbalance: SAFE, colorchannelmixer: SAFE, colorlevels: SAFE,
  lut: SAFE, lutrgb: SAFE, lutyuv: SAFE, negate: SAFE, edgedetect: SAFE,
  vignette: { uncapped: { aspect: "the vignette's shape, not the frame's size" } },
  noise: SAFE,
  boxblur: {
    order: ["luma_radius", "luma_power", "chroma_radius", "chroma_power", "alpha_radius", "alpha_power"],
    aliases: { lr: "luma_radius", lp: "luma_power", cr: "chroma_radius", cp: "chroma_power", ar: "alpha_radius", ap: "alpha_power" },
    measures: { luma_power: PASSES, chroma_power: PASSES, alpha_power: PASSES },
  },
  gblur: SAFE, avgblur: SAFE, smartblur: SAFE, unsharp: SAFE, hqdn3d: SAFE, nlmeans: SAFE,
  deband: SAFE, deblock: SAFE, colorspace: SAFE, tonemap: SAFE,
  drawbox: { uncapped: { width: "drawn inside the frame", height: "drawn inside the frame" } },
  drawgrid: { uncapped: { width: "drawn inside the frame", height: "drawn inside the frame" } },
  curves: {
    order: ["preset", "master", "red", "green", "blue", "all", "psfile", "plot"],
    aliases: { m: "master", r: "red", g: "green", b: "blue" },
    refused: { psfile: READS_FILE, plot: WRITES_FILE },
  },
  palettegen: { frame: () => ({ width: 16, height: 16 }) },
  paletteuse: {
    order: ["dither", "bayer_scale", "diff_mode", "new", "alpha_threshold", "use_alpha", "debug_kdtree"],
    refused: { debug_kdtree: WRITES_FILE },
  },
  drawtext: {
    order: ["fontfile", "text", "textfile"],
    aliases: { r: "timecode_rate", rate: "timecode_rate" },
    measures: { fontsize: DRAWN_SIZE, borderw: DRAWN_SIZE, boxborderw: DRAWN_SIZE, timecode_rate: FRAME_RATE },
    uncapped: { tabsize: "spaces per tab", start_number: "the first frame number shown" },
    refused: { fontfile: `${READS_FILE}; name an installed font with 'font=' instead`, textfile: `${READS_FILE}; put the text in 'text=' instead` },
    // `font` is a fontconfig pattern, which can carry properties such as `:file=`; a family name needs none of that syntax.
    check: (options) => options.matches("font", /^[A-Za-z0-9 _-]{1,64}$/, "a font family name"),
  },
  subtitles: {
    order: ["filename", "original_size", "fontsdir", "alpha", "charenc", "stream_index", "force_style"],
    aliases: { f: "filename", si: "stream_index" },
    measures: { original_size: FRAME_SIZE },
    refused: SUBTITLES_COMMON,
    inputFile: "filename",
    inputKind: SUBTITLE_FILE,
  },
  ass: {
    order: ["filename", "original_size", "fontsdir", "alpha", "shaping"],
    aliases: { f: "filename" },
    measures: { original_size: FRAME_SIZE },
    refused: SUBTITLES_COMMON,
    inputFile: "filename",
    inputKind: ASS_FILE,
  },
  // audio
  aresample: SAMPLE_RATE, atempo: SAFE,
  afade: { uncapped: { start_sample: "a position, not a length", nb_samples: "the fade's length only shapes gain" } },
  acrossfade: {
    order: ["nb_samples", "duration", "overlap", "curve1", "curve2"],
    aliases: { ns: "nb_samples", d: "duration", o: "overlap", c1: "curve1", c2: "curve2" },
    measures: { nb_samples: SAMPLES },
  },
  amix: { order: ["inputs", "duration", "dropout_transition", "weights", "normalize"], measures: { inputs: PADS } },
  amerge: { order: ["inputs"], measures: { inputs: PADS } },
  pan: SAFE,
  join: { order: ["inputs", "channel_layout", "map"], measures: { inputs: PADS } },
  channelsplit: SAFE, channelmap: SAFE, volume: SAFE, loudnorm: SAFE, dynaudnorm: SAFE, acompressor: SAFE,
  alimiter: SAFE, compand: SAFE, highpass: SAFE, lowpass: SAFE, bandpass: SAFE, bandreject: SAFE, equalizer: SAFE,
  bass: SAFE, treble: SAFE, silenceremove: SAFE, adelay: { order: ["delays", "all"], check: checkDelays }, aecho: SAFE, chorus: SAFE, flanger: SAFE,
  tremolo: SAFE, vibrato: SAFE, afftdn: SAFE, anlmdn: SAFE, stereotools: SAFE, extrastereo: SAFE,
  crystalizer: SAFE, asetrate: SAMPLE_RATE,
  asetnsamples: { order: ["nb_out_samples", "pad"], aliases: { n: "nb_out_samples", p: "pad" }, measures: { nb_out_samples: FRAME_SAMPLES } },
  rubberband: SAFE,
  // analysis and visualisation
  showwaves: {
    order: ["size", "mode", "n", "rate", "split_channels", "colors", "scale", "draw"],
    aliases: { s: "size", r: "rate" },
    measures: { size: FRAME_SIZE, rate: FRAME_RATE },
    uncapped: { n: "samples drawn in one column" },
    frame: sizeOption("size", "600x240"),
  },
  showwavespic: { order: ["size", "split_channels", "colors", "scale", "draw", "filter"], aliases: { s: "size" }, measures: { size: FRAME_SIZE }, frame: sizeOption("size", "600x240") },
  showspectrum: {
    order: ["size", "slide", "mode", "color", "scale", "fscale", "saturation", "win_func", "orientation", "overlap", "gain", "data", "rotation", "start", "stop", "fps"],
    aliases: { s: "size" },
    measures: { size: FRAME_SIZE, fps: FRAME_RATE },
    frame: sizeOption("size", "640x512"),
  },
  showspectrumpic: {
    order: ["size", "mode", "color", "scale", "fscale", "saturation", "win_func", "orientation", "gain", "legend", "rotation", "start", "stop", "drange", "limit", "opacity"],
    aliases: { s: "size" },
    measures: { size: FRAME_SIZE },
    frame: sizeOption("size", "4096x2048"),
  },
  volumedetect: SAFE,
  ebur128: { order: ["video", "size", "meter", "framelog", "metadata", "peak", "dualmono", "panlaw", "target", "gauge", "scale"], measures: { size: FRAME_SIZE }, frame: sizeOption("size", "640x480") },
  astats: { uncapped: { reset: "counts frames between statistics" } }, silencedetect: SAFE, blackdetect: SAFE, cropdetect: { uncapped: { round: "a divisor", reset: "counts frames", skip: "counts frames", reset_count: "counts frames" } }, showinfo: SAFE, ashowinfo: SAFE,
  // sources
  color: {
    ...VIDEO_SOURCE,
    order: ["color", ...VIDEO_SOURCE.order!],
    aliases: { ...VIDEO_SOURCE.aliases, c: "color" },
  },
  testsrc: VIDEO_SOURCE, testsrc2: VIDEO_SOURCE, smptebars: VIDEO_SOURCE, smptehdbars: VIDEO_SOURCE, nullsrc: VIDEO_SOURCE,
  sine: AUDIO_SOURCE(["frequency", "beep_factor", "sample_rate", "duration", "samples_per_frame"], { f: "frequency", b: "beep_factor", r: "sample_rate", d: "duration" }, { samples_per_frame: FRAME_SAMPLES }),
  anullsrc: AUDIO_SOURCE(["channel_layout", "sample_rate", "nb_samples", "duration"], { cl: "channel_layout", r: "sample_rate", n: "nb_samples", d: "duration" }),
  anoisesrc: AUDIO_SOURCE(["sample_rate", "amplitude", "duration", "color", "seed", "nb_samples"], { r: "sample_rate", a: "amplitude", d: "duration", colour: "color", c: "color", s: "seed", n: "nb_samples" }, { nb_samples: FRAME_SAMPLES }),
};

/** Why well-known refused filters are refused; any other unknown filter gets a generic answer. */
const REFUSED_FILTERS: Readonly<Record<string, string>> = {
  movie: "opens any file or URL as a source",
  amovie: "opens any file or URL as a source",
  sendcmd: "reads commands from a file",
  asendcmd: "reads commands from a file",
  zmq: "listens on a network socket",
  azmq: "listens on a network socket",
  frei0r: "loads a plugin library from disk",
  frei0r_src: "loads a plugin library from disk",
  ladspa: "loads a plugin library from disk",
  lv2: "loads a plugin library from disk",
  lut3d: "reads a LUT file from disk",
  lut1d: "reads a LUT file from disk",
  removelogo: "reads a bitmap file from disk",
  metadata: "can write frame metadata to a file",
  ametadata: "can write frame metadata to a file",
  vidstabdetect: "writes a transforms file",
  vidstabtransform: "reads a transforms file",
  psnr: "can write statistics to a file",
  ssim: "can write statistics to a file",
  life: "reads its pattern from a file",
  cellauto: "reads its pattern from a file",
  arnndn: "loads a model file",
  sofalizer: "reads a SOFA file",
  firequalizer: "can write a dump file",
  deshake: "can write a log file",
  signature: "writes signature files",
  hwupload: "uses hardware devices, which transcoders do not have",
  hwdownload: "uses hardware devices, which transcoders do not have",
  hwmap: "uses hardware devices, which transcoders do not have",
};

/**
 * Parses one filter graph and applies the filter allow-list and caps. Returns the graph so
 * callers need not parse it twice.
 */
export function checkFilterGraph(text: string, context: GraphContext): FilterGraph {
  const graph = parseFilterGraph(text);
  checkScalerFlags(graph);
  checkFrameSizes(checkedChains(graph, context));
  return graph;
}

/** The largest frame of the input stream a graph reads through `label` (`0:v`, `1`), or through an unlabelled first pad. */
export type InputFrames = (label?: string) => FrameBound;

/**
 * The run-time half of the frame-size check: once ffmpeg has described its inputs, a link
 * whose size follows from an input is bounded by that input's largest frame, and every frame
 * the graph makes is judged again.
 */
export function checkGraphFrames(text: string, context: GraphContext, inputFrames: InputFrames, settled: boolean): void {
  checkFrameSizes(checkedChains(parseFilterGraph(text), context), inputFrames, settled);
}

type CheckedChain = readonly { node: FilterNode; options: FilterOptions }[];

function checkedChains(graph: FilterGraph, context: GraphContext): CheckedChain[] {
  return graph.chains.map((chain) =>
    chain.map((node) => {
      context.notes.filters++;
      if (context.notes.filters > context.limits.maxFilters) {
        throw refuse("LIMIT_EXCEEDED", node.name, `The command uses more than ${context.limits.maxFilters} filters.`);
      }
      return { node, options: checkFilter(node, context) };
    }),
  );
}

/**
 * Follows the largest frame along every link (see filter-geometry.ts) and refuses a filter
 * that makes one past the caps. A label may be used before the chain that makes it, so the
 * walk repeats until no link learns more; a label no filter makes is an input stream, unknown
 * at submission. Once every input's size is known (`settled`, at run time), a last walk over
 * the settled links also refuses frames that follow from them but cannot be bounded.
 */
function checkFrameSizes(chains: readonly CheckedChain[], inputFrames?: InputFrames, settled = false): void {
  const frames = new Map<string, FrameBound>();
  let changed = true;
  for (let pass = 0; changed && pass <= chains.length; pass++) changed = walkFrames(chains, frames, inputFrames, false);
  if (settled) walkFrames(chains, frames, inputFrames, true);
}

/** One walk over every chain; says whether a link learned its frame. */
function walkFrames(chains: readonly CheckedChain[], frames: Map<string, FrameBound>, inputFrames: InputFrames | undefined, inputsKnown: boolean): boolean {
  const made = new Set(chains.flat().flatMap(({ node }) => node.outputs));
  const linked = (label: string) => (made.has(label) ? frames.get(label) : inputFrames?.(label));
  let changed = false;
  for (const chain of chains) {
    // Unlabelled outputs feed the next filter of the chain; a chain's first filter reads an input stream.
    let unlabelled: FrameBound[] = [inputFrames?.()];
    for (const { node, options } of chain) {
      const inputs = [...node.inputs.map(linked), ...unlabelled];
      const frame = (FILTERS[node.name]!.frame ?? sameAsInput)(options, inputs, inputsKnown);
      if (frame && enlarges(frame, inputs)) options.checkFrame(frame);
      for (const label of node.outputs) {
        if (frame !== undefined && frames.get(label) === undefined) changed = true;
        frames.set(label, frame);
      }
      unlabelled = node.outputs.length === 0 ? new Array<FrameBound>(MAX_FILTER_PADS).fill(frame) : [];
    }
  }
  return changed;
}

/**
 * A frame no larger than one of the filter's inputs was judged where that input was made (an
 * input file's frames by the transcoder's input cap, which may be looser than the frame cap).
 */
function enlarges(frame: VideoSize, inputs: readonly FrameBound[]): boolean {
  return !inputs.some((input) => input !== undefined && frame.width <= input.width && frame.height <= input.height);
}

/**
 * graphparser.c hands the text after `sws_flags=` to every scaler in the graph as options
 * (`flags=` + the text), so `sws_flags=bicubic:w=99999;` would set every scaler's width.
 * Only the flags themselves are allowed.
 */
function checkScalerFlags(graph: FilterGraph): void {
  const flags = graph.swsFlags;
  if (flags !== undefined && !/^[A-Za-z0-9_+-]*$/.test(flags)) {
    throw refuse("FILTER_NOT_ALLOWED", `sws_flags=${flags}`, `The graph's 'sws_flags=' takes scaler flags only, such as bicubic+accurate_rnd; ${quote(flags)} would set other options on every scaler.`);
  }
}

function checkFilter(node: FilterNode, context: GraphContext): FilterOptions {
  const rule = FILTERS[node.name];
  if (!rule) throw filterRefused(node.name, REFUSED_FILTERS[node.name] ?? "is not on the list of allowed filters");
  const options = new FilterOptions(node.name, resolveArguments(node, rule, context), context);
  for (const [name, why] of Object.entries(rule.refused ?? {})) {
    if (options.has(name)) throw filterRefused(node.name, `with '${name}=' ${why}`);
  }
  if (rule.inputFile !== undefined) checkInputFile(options, rule.inputFile, rule.inputKind, context);
  options.cap("threads", context.limits.maxThreads, "threads");
  if (!rule.order?.includes("size")) options.capSizeIfSize("size");
  if (!rule.order?.includes("s")) options.capSizeIfSize("s");
  for (const [name, measure] of Object.entries(rule.measures ?? {})) measure(options, name);
  rule.check?.(options);
  return options;
}

/** Maps each argument to its option name, through position and aliases. */
function resolveArguments(node: FilterNode, rule: FilterRule, context: GraphContext): Map<string, string> {
  const resolved = new Map<string, string>();
  const constrained = rule.refused !== undefined || rule.inputFile !== undefined || rule.check !== undefined || rule.measures !== undefined || rule.order !== undefined;
  argumentsOf(node, rule, context.inputUrls).forEach((argument, index) => {
    if (argument.key?.startsWith("/")) {
      throw filterRefused(node.name, `with ${quote(argument.key)}: a '/' before an option name makes ffmpeg read the value from a file`);
    }
    if (argument.key === undefined && !constrained) return;
    const name = argument.key ?? rule.order?.[index];
    if (name === undefined) {
      throw refuse("FILTER_NOT_ALLOWED", node.name, `Give the arguments of '${node.name}' after the first ${rule.order?.length ?? 0} as key=value (${quote(argument.value)} has no name).`);
    }
    const option = rule.aliases?.[name] ?? name;
    // ffmpeg keeps the last of two settings; refusing repeats keeps every check on the value that counts.
    if (resolved.has(option)) throw filterRefused(node.name, `sets '${option}' twice`);
    resolved.set(option, argument.value);
  });
  return resolved;
}

/**
 * The filter's arguments. For a filter that names an input file, a leading input URL is taken
 * whole even though its `:` would split it for ffmpeg (`subtitles=https://host/subs.srt` is
 * what users write); buildArgv replaces it with a local path, properly escaped, so ffmpeg never
 * sees the URL.
 */
function argumentsOf(node: FilterNode, rule: FilterRule, inputUrls: readonly string[]): FilterArgument[] {
  const args = node.args ?? "";
  if (rule.inputFile !== undefined && rule.order?.[0] === rule.inputFile) {
    const url = inputUrls.find((candidate) => args === candidate || args.startsWith(`${candidate}:`));
    if (url !== undefined) return [{ value: url }, ...parseFilterArguments(args.slice(url.length + 1))];
  }
  const parsed = parseFilterArguments(args);
  let keyed = false;
  for (const argument of parsed) {
    if (argument.key !== undefined) keyed = true;
    else if (keyed) throw refuse("FILTER_GRAPH_INVALID", node.name, `In '${node.name}', the bare argument ${quote(argument.value)} follows a key=value one; ffmpeg only takes bare arguments first.`);
  }
  return parsed;
}

function checkInputFile(options: FilterOptions, name: string, kind: FilterRule["inputKind"], context: GraphContext): void {
  const file = options.get(name);
  if (file === undefined) throw filterRefused(options.filter, `needs '${name}=' naming one of the task's inputs`);
  if (!context.inputUrls.includes(file)) {
    throw filterRefused(options.filter, `can only read one of the task's own inputs; ${quote(file)} is not one of its '-i' URLs`);
  }
  if (kind === undefined) return;
  const extensions = [...kind.extensions].map((extension) => `.${extension}`).join(", ");
  if (!kind.extensions.has(urlExtension(file))) throw filterRefused(options.filter, `reads only subtitle files (${extensions}); ${quote(file)} does not end in one`);
  context.inputUrls.forEach((url, index) => {
    const forced = context.inputFormats[index];
    if (url === file && forced !== undefined && !kind.formats.has(forced)) {
      throw filterRefused(options.filter, `reads only subtitle formats (${[...kind.formats].join(", ")}); its input is read with '-f ${forced}'`);
    }
  });
}

function urlExtension(url: string): string {
  const path = new URL(url).pathname;
  const dot = path.lastIndexOf(".");
  return dot === -1 || path.lastIndexOf("/") > dot ? "" : path.slice(dot + 1).toLowerCase();
}

function filterRefused(filter: string, why: string): Error {
  return refuse("FILTER_NOT_ALLOWED", filter, `The filter '${filter}' ${why}.`);
}

/**
 * The graph ffmpeg will run: re-written from what was checked, with every input-file option
 * (`subtitles=`) pointed at the local copy of that input.
 */
export function renderFilterGraph(text: string, localPathOf: (url: string) => string, inputUrls: readonly string[]): string {
  const graph = parseFilterGraph(text);
  for (const node of graph.chains.flat()) {
    const rule = FILTERS[node.name];
    if (rule?.inputFile !== undefined) node.args = withLocalInput(node, rule, rule.inputFile, localPathOf, inputUrls);
  }
  return serializeFilterGraph(graph);
}

function withLocalInput(node: FilterNode, rule: FilterRule, name: string, localPathOf: (url: string) => string, inputUrls: readonly string[]): string {
  const args = argumentsOf(node, rule, inputUrls).map((argument, index) => {
    const option = argument.key === undefined ? rule.order?.[index] : (rule.aliases?.[argument.key] ?? argument.key);
    return option === name ? { ...argument, value: localPathOf(argument.value) } : argument;
  });
  return serializeFilterArguments(args);
}

/** For tests that keep the allow-list honest against the pinned ffmpeg. */
export const FILTER_RULES: Readonly<Record<string, Readonly<FilterRule>>> = FILTERS;
