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
import { between, exactly, type Range, type Variables } from "./expression";
import { FilterOptions, LOWEST_SAMPLE_RATE } from "./filter-options";
import type { PolicyLimits } from "./limits";
import { quote, refuse } from "./refusal";

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
  check?: (options: FilterOptions) => void;
}

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
  check: (options) => {
    options.capSize("size");
    options.capRate("rate");
    options.boundedDuration("duration");
  },
};

const AUDIO_SOURCE = (order: readonly string[], aliases: Record<string, string>): FilterRule => ({
  order,
  aliases,
  check: (options) => {
    options.cap("sample_rate", options.limits.maxSampleRate, "samples per second");
    options.boundedDuration("duration");
  },
});

const SAMPLE_RATE: FilterRule = {
  order: ["sample_rate"],
  // aresample also takes libswresample's own spellings of the output rate.
  aliases: { r: "sample_rate", osr: "sample_rate", out_sample_rate: "sample_rate" },
  check: (options) => options.cap("sample_rate", options.limits.maxSampleRate, "samples per second"),
};

const LOOP: FilterRule = {
  order: ["loop", "size", "start"],
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

/**
 * What a size expression may name, bounded by the caps: the input's size (the transcoder's
 * probe refuses larger inputs), its aspect ratio, chroma subsampling, and the frame number and
 * time. The sample aspect ratio is taken as 1 here: an input with non-square pixels
 * (`iw*sar`) is judged by the transcoder, which checks every output's real frame size in
 * ffmpeg's stream information.
 */
function frameVariables(limits: PolicyLimits): Variables {
  const width = between(1, limits.maxWidth);
  const height = between(1, limits.maxHeight);
  const aspect = between(1 / limits.maxHeight, limits.maxWidth);
  const subsampling = between(1, 4);
  return {
    iw: width, in_w: width, ih: height, in_h: height, a: aspect, dar: aspect, sar: exactly(1),
    hsub: subsampling, vsub: subsampling, ohsub: subsampling, ovsub: subsampling,
    n: between(0, limits.maxFrames), t: between(0, limits.maxDurationSeconds),
  };
}

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
    check: (options) => {
      // ffmpeg reads a lone width as a size (`scale=1280x720`, `scale=hd720`).
      if (options.has("w") && !options.has("h")) options.capSize("w");
      else outputSize("w", "h")(options);
      options.capSize("size");
    },
  },
  zscale: {
    order: ["w", "h", "size"],
    aliases: { width: "w", height: "h", s: "size" },
    check: (options) => {
      options.capSize("size");
      outputSize("w", "h")(options);
    },
  },
  pad: {
    order: ["width", "height", "x", "y", "color", "eval", "aspect"],
    aliases: { w: "width", h: "height" },
    check: outputSize("width", "height"),
  },
  rotate: {
    order: ["angle", "out_w", "out_h", "fillcolor", "bilinear"],
    aliases: { a: "angle", ow: "out_w", oh: "out_h", c: "fillcolor" },
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
  crop: SAFE, transpose: SAFE, hflip: SAFE, vflip: SAFE, setsar: SAFE, setdar: SAFE,
  setpts: SAFE, asetpts: SAFE, settb: SAFE, asettb: SAFE, trim: SAFE, atrim: SAFE, select: SAFE, aselect: SAFE,
  fps: { order: ["fps", "start_time", "round", "eof_action"], check: (options) => options.capRate("fps") },
  framerate: { order: ["fps"], check: (options) => options.capRate("fps") },
  minterpolate: { order: ["fps"], check: (options) => options.capRate("fps") },
  reverse: SAFE, areverse: SAFE, framestep: SAFE, mpdecimate: SAFE, decimate: SAFE, thumbnail: SAFE,
  loop: {
    ...LOOP,
    check: (options) => {
      LOOP.check!(options);
      options.cap("size", options.limits.maxLoopFrames, "frames held in memory");
    },
  },
  aloop: LOOP,
  tpad: {
    order: ["start", "stop", "start_mode", "stop_mode", "start_duration", "stop_duration", "color"],
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
    check: (options) => {
      // A length that may be 0 or less means "no limit": apad then pads forever.
      const lengths = ["pad_len", "whole_len"].map((name) => options.capSamples(name)?.lo ?? -1);
      const durations = ["pad_dur", "whole_dur"].map((name) => options.capDuration(name) ?? -1);
      if ([...lengths, ...durations].every((amount) => amount <= 0)) options.markUnbounded();
    },
  },
  concat: SAFE, split: SAFE, asplit: SAFE, null: SAFE, anull: SAFE, copy: SAFE, acopy: SAFE, fifo: SAFE, afifo: SAFE,
  format: SAFE, aformat: SAFE, setparams: SAFE, setfield: SAFE, fieldorder: SAFE, yadif: SAFE, bwdif: SAFE,
  // composition
  overlay: SAFE, hstack: SAFE, vstack: SAFE, xstack: SAFE, blend: SAFE, xfade: SAFE, alphamerge: SAFE,
  alphaextract: SAFE, colorkey: SAFE, chromakey: SAFE, haldclut: SAFE,
  tile: {
    order: ["layout", "nb_frames", "margin", "padding", "color", "overlap", "init_padding"],
    check: (options) => options.capTileLayout("layout"),
  },
  zoompan: {
    order: ["zoom", "x", "y", "d", "s", "fps"],
    aliases: { z: "zoom" },
    check: (options) => {
      options.cap("d", options.limits.maxFrames, "frames", zoompanVariables(options.limits));
      options.capSize("s");
      options.capRate("fps");
    },
  },
  // picture
  fade: SAFE, eq: SAFE, hue: SAFE, colorbalance: SAFE, colorchannelmixer: SAFE, colorlevels: SAFE,
  lut: SAFE, lutrgb: SAFE, lutyuv: SAFE, negate: SAFE, edgedetect: SAFE, vignette: SAFE, noise: SAFE,
  boxblur: SAFE, gblur: SAFE, avgblur: SAFE, smartblur: SAFE, unsharp: SAFE, hqdn3d: SAFE, nlmeans: SAFE,
  deband: SAFE, deblock: SAFE, colorspace: SAFE, tonemap: SAFE, drawbox: SAFE, drawgrid: SAFE,
  curves: {
    order: ["preset", "master", "red", "green", "blue", "all", "psfile", "plot"],
    aliases: { m: "master", r: "red", g: "green", b: "blue" },
    refused: { psfile: READS_FILE, plot: WRITES_FILE },
  },
  palettegen: SAFE,
  paletteuse: {
    order: ["dither", "bayer_scale", "diff_mode", "new", "alpha_threshold", "use_alpha", "debug_kdtree"],
    refused: { debug_kdtree: WRITES_FILE },
  },
  drawtext: {
    order: ["fontfile", "text", "textfile"],
    refused: { fontfile: `${READS_FILE}; name an installed font with 'font=' instead`, textfile: `${READS_FILE}; put the text in 'text=' instead` },
    // `font` is a fontconfig pattern, which can carry properties such as `:file=`; a family name needs none of that syntax.
    check: (options) => options.matches("font", /^[A-Za-z0-9 _-]{1,64}$/, "a font family name"),
  },
  subtitles: {
    order: ["filename", "original_size", "fontsdir", "alpha", "charenc", "stream_index", "force_style"],
    aliases: { f: "filename", si: "stream_index" },
    refused: SUBTITLES_COMMON,
    inputFile: "filename",
    inputKind: SUBTITLE_FILE,
  },
  ass: {
    order: ["filename", "original_size", "fontsdir", "alpha", "shaping"],
    aliases: { f: "filename" },
    refused: SUBTITLES_COMMON,
    inputFile: "filename",
    inputKind: ASS_FILE,
  },
  // audio
  aresample: SAMPLE_RATE, atempo: SAFE, afade: SAFE, acrossfade: SAFE, amix: SAFE, amerge: SAFE, pan: SAFE, join: SAFE,
  channelsplit: SAFE, channelmap: SAFE, volume: SAFE, loudnorm: SAFE, dynaudnorm: SAFE, acompressor: SAFE,
  alimiter: SAFE, compand: SAFE, highpass: SAFE, lowpass: SAFE, bandpass: SAFE, bandreject: SAFE, equalizer: SAFE,
  bass: SAFE, treble: SAFE, silenceremove: SAFE, adelay: { order: ["delays", "all"], check: checkDelays }, aecho: SAFE, chorus: SAFE, flanger: SAFE,
  tremolo: SAFE, vibrato: SAFE, afftdn: SAFE, anlmdn: SAFE, stereotools: SAFE, extrastereo: SAFE,
  crystalizer: SAFE, asetrate: SAMPLE_RATE, asetnsamples: SAFE, rubberband: SAFE,
  // analysis and visualisation
  showwaves: SAFE, showwavespic: SAFE, showspectrum: SAFE, showspectrumpic: SAFE, volumedetect: SAFE,
  ebur128: SAFE, astats: SAFE, silencedetect: SAFE, blackdetect: SAFE, cropdetect: SAFE, showinfo: SAFE, ashowinfo: SAFE,
  // sources
  color: {
    ...VIDEO_SOURCE,
    order: ["color", ...VIDEO_SOURCE.order!],
    aliases: { ...VIDEO_SOURCE.aliases, c: "color" },
  },
  testsrc: VIDEO_SOURCE, testsrc2: VIDEO_SOURCE, smptebars: VIDEO_SOURCE, smptehdbars: VIDEO_SOURCE, nullsrc: VIDEO_SOURCE,
  sine: AUDIO_SOURCE(["frequency", "beep_factor", "sample_rate", "duration"], { f: "frequency", b: "beep_factor", r: "sample_rate", d: "duration" }),
  anullsrc: AUDIO_SOURCE(["channel_layout", "sample_rate", "nb_samples", "duration"], { cl: "channel_layout", r: "sample_rate", n: "nb_samples", d: "duration" }),
  anoisesrc: AUDIO_SOURCE(["sample_rate", "amplitude", "duration"], { r: "sample_rate", a: "amplitude", d: "duration" }),
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
  for (const node of graph.chains.flat()) {
    context.notes.filters++;
    if (context.notes.filters > context.limits.maxFilters) {
      throw refuse("LIMIT_EXCEEDED", node.name, `The command uses more than ${context.limits.maxFilters} filters.`);
    }
    checkFilter(node, context);
  }
  return graph;
}

function checkFilter(node: FilterNode, context: GraphContext): void {
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
  rule.check?.(options);
}

/** Maps each argument to its option name, through position and aliases. */
function resolveArguments(node: FilterNode, rule: FilterRule, context: GraphContext): Map<string, string> {
  const resolved = new Map<string, string>();
  const constrained = rule.refused !== undefined || rule.inputFile !== undefined || rule.check !== undefined;
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
