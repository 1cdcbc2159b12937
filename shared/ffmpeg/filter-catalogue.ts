import { between, type Range } from "./expression";
import { aspectFit, cropped, expressedSize, frameVariables, padded, scaled, sizeOption, stacked, tiled, transposed, xstacked } from "./filter-geometry";
import {
  ASS_FILE,
  AUDIO_SOURCE,
  checkDelays,
  DRAWN_SIZE,
  type FilterRule,
  FRAME_RATE,
  FRAME_SAMPLES,
  FRAME_SIZE,
  GRID,
  HELD_FRAMES,
  IN_CHECK,
  LOOP,
  outputSize,
  PADS,
  PASSES,
  READS_FILE,
  SAFE,
  SAMPLE_RATE,
  SAMPLE_RATES,
  SAMPLES,
  SUBTITLE_FILE,
  SUBTITLES_COMMON,
  VIDEO_SOURCE,
  WRITES_FILE,
  ZOOMPAN_FRAMES_WITHOUT_BOUND,
  zoompanVariables,
} from "./filter-rules";

/** The allow-list: any filter not named here is refused. The pinned-ffmpeg test keeps it honest against the ffmpeg the transcoder runs. */
export const FILTER_RULES: Readonly<Record<string, FilterRule>> = {
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
export const REFUSED_FILTERS: Readonly<Record<string, string>> = {
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
