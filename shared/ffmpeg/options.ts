import {
  cappedDuration,
  decimal,
  encoderParams,
  filterGraph,
  flagList,
  flagsIn,
  frameCount,
  frameRate,
  fromEnd,
  imageLoop,
  integer,
  listIn,
  matching,
  metadataEntry,
  metadataMap,
  namedIn,
  noValue,
  oneOf,
  outputFile,
  quantity,
  siblingFile,
  streamLoop,
  streamMap,
  text,
  threadCount,
  timePosition,
  type ValueCheck,
  videoSize,
  word,
  x264Options,
} from "./checks";
import { BITSTREAM_FILTERS, DECODERS, DEMUXERS, ENCODERS, MUXERS, SEGMENT_FORMATS } from "./formats";

/**
 * The options a command may use. This table is the allow-list and the parser's grammar at
 * once: an option not named here is refused, and `takesValue` must match ffmpeg exactly,
 * since reading a flag as taking a value (or the reverse) would let the next word be taken
 * for a file. test/shared/ffmpeg/pinned-ffmpeg.test.ts checks it against the pinned binary.
 *
 * Where an option may stand is given by its checks: `global` options go anywhere, `input`
 * ones before `-i`, `output` ones before an output name. Names are without the dash and
 * without stream specifiers (`-c:v` is `c`).
 */
export interface OptionRule {
  takesValue: boolean;
  /** May carry a stream specifier (`-c:v`, `-b:a:0`, `-metadata:s:a:0`). */
  specifier: boolean;
  global?: ValueCheck;
  input?: ValueCheck;
  output?: ValueCheck;
  /** How buildArgv rewrites the value: a file put in the output directory, or a graph re-written from what was checked. */
  rewrite?: "output-path" | "filter-graph";
  /** Text ffmpeg stores and never evaluates (`-metadata title=…`), so it may say "while (…)". */
  freeText?: true;
}

type Placement = Pick<OptionRule, "global" | "input" | "output">;

const valued = (placement: Placement, extra: Partial<OptionRule> = {}): OptionRule => ({ takesValue: true, specifier: false, ...placement, ...extra });
const flag = (placement: "global" | "input" | "output" | "either", specifier = false): OptionRule => ({
  takesValue: false,
  specifier,
  ...(placement === "either" ? { input: noValue, output: noValue } : { [placement]: noValue }),
});

const global = (check: ValueCheck, extra?: Partial<OptionRule>) => valued({ global: check }, extra);
const input = (check: ValueCheck, extra?: Partial<OptionRule>) => valued({ input: check }, extra);
const output = (check: ValueCheck, extra?: Partial<OptionRule>) => valued({ output: check }, extra);
const either = (check: ValueCheck, extra?: Partial<OptionRule>) => valued({ input: check, output: check }, extra);
const spec = { specifier: true } as const;

const demuxer = namedIn(DEMUXERS, "an input format");
const muxer = namedIn(MUXERS, "an output format");
const codec = { input: namedIn(DECODERS, "a decoder"), output: namedIn(ENCODERS, "an encoder") };
const graph = { rewrite: "filter-graph" } as const;
const logLevel = matching(/^((repeat|level)\+)*(quiet|panic|fatal|error|warning|info|verbose)$/, "a log level from quiet to verbose");
const boolean = integer(0, 1, "0 or 1");

const X264_KEYS = new Set([
  "keyint", "min-keyint", "scenecut", "no-scenecut", "bframes", "b-adapt", "b-pyramid", "ref", "rc-lookahead", "aq-mode",
  "aq-strength", "psy-rd", "deblock", "no-deblock", "me", "subme", "merange", "trellis", "mbtree", "no-mbtree", "weightp",
  "weightb", "crf", "qp", "vbv-maxrate", "vbv-bufsize", "nal-hrd", "force-cfr", "open-gop", "level", "profile", "colorprim",
  "transfer", "colormatrix", "range", "fullrange", "bluray-compat", "intra-refresh", "slices", "partitions", "direct",
  "8x8dct", "cabac", "no-cabac", "fast-pskip", "no-fast-pskip", "mixed-refs", "keyint-min",
]);
const X265_KEYS = new Set([
  "keyint", "min-keyint", "scenecut", "no-scenecut", "bframes", "b-adapt", "ref", "rc-lookahead", "aq-mode", "aq-strength",
  "psy-rd", "psy-rdoq", "crf", "qp", "vbv-maxrate", "vbv-bufsize", "log-level", "sao", "no-sao", "strong-intra-smoothing",
  "no-strong-intra-smoothing", "hdr-opt", "hdr10-opt", "repeat-headers", "colorprim", "transfer", "colormatrix", "range",
  "master-display", "max-cll", "open-gop", "no-open-gop", "lossless", "level-idc", "high-tier", "deblock", "rd", "ctu", "me",
  "subme", "merange", "weightp", "limit-sao", "selective-sao",
]);
const SVTAV1_KEYS = new Set([
  "preset", "crf", "tune", "film-grain", "film-grain-denoise", "keyint", "enable-overlays", "scd", "fast-decode", "enable-tf",
  "irefresh-type", "enable-qm", "qm-min", "qm-max", "aq-mode",
]);
const AOM_KEYS = new Set([
  "tune", "enable-tpl-model", "enable-keyframe-filtering", "cq-level", "end-usage", "kf-max-dist", "kf-min-dist", "enable-cdef",
  "enable-restoration", "enable-fwd-kf", "arnr-maxframes", "arnr-strength", "sharpness", "aq-mode", "deltaq-mode",
]);

/** HLS flags that only shape segments and playlists; not the encryption or strftime ones. */
const HLS_FLAGS = [
  "single_file", "delete_segments", "round_durations", "discont_start", "omit_endlist", "split_by_time",
  "program_date_time", "independent_segments", "iframes_only", "temp_file",
];

export const OPTIONS: Readonly<Record<string, OptionRule>> = {
  // global
  loglevel: global(logLevel), v: global(logLevel),
  filter_complex: global(filterGraph, graph), lavfi: global(filterGraph, graph),
  filter_threads: global(threadCount), filter_complex_threads: global(threadCount),
  copyts: flag("global"), start_at_zero: flag("global"), ignore_unknown: flag("global"), copy_unknown: flag("global"),
  vsync: global(oneOf("passthrough", "cfr", "vfr", "drop", "auto", "0", "1", "2", "-1")),

  // formats and codecs
  f: valued({ input: demuxer, output: muxer }),
  c: valued(codec, spec), codec: valued(codec, spec), vcodec: valued(codec), acodec: valued(codec), scodec: valued(codec),

  // seeking, duration, looping
  ss: either(timePosition), t: either(cappedDuration), to: either(cappedDuration),
  sseof: input(fromEnd), itsoffset: input(cappedDuration), itsscale: input(decimal(0.01, 100), spec),
  accurate_seek: flag("input"), noaccurate_seek: flag("input"),
  stream_loop: input(streamLoop),
  loop: valued({ input: imageLoop, output: integer(-1, 65535, "a loop count") }),
  framerate: input(frameRate),
  start_number: either(integer(0, 1_000_000_000)),
  probesize: input(integer(32, 50_000_000, "a number of bytes")),
  analyzeduration: input(integer(0, 100_000_000, "a number of microseconds")),
  fflags: either(flagList),
  autorotate: input(boolean, spec), noautorotate: flag("input", true),
  bitexact: flag("either"),

  // frames and pictures
  frames: output(frameCount, spec), vframes: output(frameCount), aframes: output(frameCount), dframes: output(frameCount),
  r: either(frameRate, spec), fpsmax: output(frameRate, spec),
  s: either(videoSize, spec),
  aspect: output(matching(/^\d{1,5}([:/]\d{1,5}|\.\d{1,6})?$/, "an aspect ratio such as 16:9 or 1.7778"), spec),
  pix_fmt: either(word, spec),
  vf: output(filterGraph, graph), af: output(filterGraph, graph), filter: output(filterGraph, { ...graph, ...spec }),
  fps_mode: output(oneOf("passthrough", "cfr", "vfr", "drop", "auto"), spec),
  force_key_frames: output(text(256), spec),
  color_primaries: either(word, spec), color_trc: either(word, spec), colorspace: either(word, spec), color_range: either(word, spec),
  sws_flags: either(flagList),

  // rate control and encoder settings
  b: output(quantity, spec), ab: output(quantity), maxrate: output(quantity, spec), minrate: output(quantity, spec), bufsize: output(quantity, spec),
  crf: output(decimal(0, 63), spec), qp: output(integer(0, 255), spec), q: output(decimal(0, 255), spec), qscale: output(decimal(0, 255), spec),
  qmin: output(integer(-1, 255), spec), qmax: output(integer(-1, 255), spec), aq: output(decimal(0, 255), spec),
  preset: output(word, spec), tune: output(word, spec), profile: output(word, spec), level: output(word, spec),
  g: output(integer(0, 100_000), spec), keyint_min: output(integer(0, 100_000), spec), bf: output(integer(0, 16), spec),
  refs: output(integer(0, 16), spec), sc_threshold: output(integer(-1_000_000, 1_000_000), spec),
  threads: either(threadCount, spec),
  "x264-params": output(encoderParams(X264_KEYS), spec), x264opts: output(x264Options(X264_KEYS), spec),
  "x265-params": output(encoderParams(X265_KEYS), spec), "svtav1-params": output(encoderParams(SVTAV1_KEYS), spec),
  "aom-params": output(encoderParams(AOM_KEYS), spec),
  "cpu-used": output(integer(-16, 16), spec), speed: output(integer(-16, 16), spec), deadline: output(oneOf("good", "best", "realtime"), spec),
  quality: output(word, spec), usage: output(word, spec), "row-mt": output(boolean, spec), "tile-columns": output(integer(0, 6), spec),
  "tile-rows": output(integer(0, 6), spec), "lag-in-frames": output(integer(0, 70), spec), "auto-alt-ref": output(integer(0, 6), spec),
  "aq-mode": output(integer(0, 4), spec), "forced-idr": output(word, spec),
  "still-picture": output(boolean, spec), lossless: output(boolean, spec), compression_level: output(integer(0, 12), spec),
  vbr: output(word, spec), application: output(oneOf("voip", "audio", "lowdelay"), spec), frame_duration: output(decimal(2.5, 120), spec),
  cutoff: output(integer(0, 100_000), spec),
  flags: output(flagList, spec), strict: either(oneOf("very", "strict", "normal", "unofficial", "experimental", "-2", "-1", "0", "1", "2"), spec),
  tag: output(matching(/^([A-Za-z0-9_]{1,4}|0x[0-9A-Fa-f]{1,8})$/, "a four-character code such as hvc1"), spec),

  // audio
  ar: either(integer(1, (limits) => limits.maxSampleRate, "a sample rate"), spec), ac: either(integer(1, 16, "a channel count"), spec),
  sample_fmt: either(word, spec), channel_layout: either(word, spec),

  // streams, mapping, metadata
  an: flag("either"), vn: flag("either"), sn: flag("either"), dn: flag("either"),
  map: output(streamMap), map_metadata: output(metadataMap, spec), map_chapters: output(integer(-1, 999)),
  metadata: output(metadataEntry, { ...spec, freeText: true }), disposition: output(flagList, spec),
  shortest: flag("output"), copyinkf: flag("output", true),
  bsf: output(listIn(BITSTREAM_FILTERS, "bitstream filters"), spec),
  max_muxing_queue_size: output(integer(1, 65_536), spec),
  muxdelay: output(decimal(0, 60)), muxpreload: output(decimal(0, 60)),
  avoid_negative_ts: output(oneOf("auto", "disabled", "make_non_negative", "make_zero", "-1", "0", "1", "2")),
  timecode: output(matching(/^\d{2}:\d{2}:\d{2}[:;.]\d{2}$/, "a timecode such as 00:00:00:00")),
  fs: output(quantity),

  // muxers: mp4, mp3, images, HLS, segments
  movflags: output(flagList), frag_duration: output(integer(0, 1_000_000_000)), id3v2_version: output(oneOf("0", "3", "4")),
  update: output(boolean), frame_pts: output(boolean),
  hls_time: output(decimal(0.1, 3600)), hls_init_time: output(decimal(0, 3600)), hls_list_size: output(integer(0, 100_000)),
  hls_playlist_type: output(oneOf("event", "vod")), hls_flags: output(flagsIn(...HLS_FLAGS)), hls_segment_type: output(oneOf("mpegts", "fmp4")),
  hls_segment_filename: output(outputFile, { rewrite: "output-path" }),
  // hlsenc.c writes these next to the playlist, so a plain name keeps them in the output directory without rewriting.
  hls_fmp4_init_filename: output(siblingFile), master_pl_name: output(siblingFile),
  var_stream_map: output(matching(/^[A-Za-z0-9:,_ ]{1,256}$/, "stream groups such as 'v:0,a:0 v:1,a:1'")),
  segment_time: output(cappedDuration), segment_times: output(matching(/^\d{1,6}(\.\d{1,6})?(,\d{1,6}(\.\d{1,6})?){0,999}$/, "a comma-separated list of times")),
  segment_format: output(namedIn(SEGMENT_FORMATS, "a segment format")), segment_list: output(outputFile, { rewrite: "output-path" }),
  segment_list_type: output(oneOf("flat", "csv", "ext", "ffconcat", "m3u8", "hls")), segment_list_size: output(integer(0, 100_000)),
  segment_start_number: output(integer(0, 1_000_000_000)), segment_wrap: output(integer(0, 100_000)), reset_timestamps: output(boolean),
  // dash: segments keep the muxer's default names (formats.ts DASH_SEGMENT_NAME)
  seg_duration: output(decimal(0.1, 3600)), use_template: output(boolean), use_timeline: output(boolean),
  dash_segment_type: output(oneOf("auto", "mp4", "webm")),
  adaptation_sets: output(matching(/^id=\d{1,3},streams=([avs]|\d{1,3}(,\d{1,3}){0,31})( id=\d{1,3},streams=([avs]|\d{1,3}(,\d{1,3}){0,31})){0,31}$/, "adaptation sets such as 'id=0,streams=v id=1,streams=a'")),
};

/** Harmless duplicates of what the service sets itself: real commands are full of `-y`, so they are dropped silently. */
export const STRIPPED_OPTIONS: ReadonlySet<string> = new Set(["y", "hide_banner", "nostats"]);

export interface OptionRefusal {
  code: "OPTION_RESERVED" | "OPTION_NOT_ALLOWED";
  reason: string;
}

function refusals(code: OptionRefusal["code"], reason: string, names: string[]): Record<string, OptionRefusal> {
  return Object.fromEntries(names.map((name) => [name, { code, reason }]));
}

/** Options refused with a specific reason (anything else not in OPTIONS gets a generic one). */
export const REFUSED_OPTIONS: Readonly<Record<string, OptionRefusal>> = {
  ...refusals("OPTION_RESERVED", "is set by the service itself, which decides how ffmpeg reads inputs, overwrites and reports", [
    "n", "nostdin", "stdin", "progress", "stats", "stats_period", "report", "protocol_whitelist", "protocol_blacklist",
    "safe", "allowed_extensions", "timelimit", "max_alloc", "cpuflags", "cpucount",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "reads a file from the transcoder's disk", [
    "filter_script", "filter_complex_script", "attach", "pre", "fpre", "vpre", "apre", "spre", "hls_key_info_file",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "writes a file outside the task's outputs", [
    "vstats", "vstats_file", "vstats_version", "pass", "passlogfile", "dump_attachment", "sdp_file", "hls_enc",
    "segment_header_filename",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "uses hardware devices, and transcoders have none", [
    "hwaccel", "hwaccel_device", "hwaccel_output_format", "init_hw_device", "filter_hw_device", "vaapi_device", "qsv_device",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "is a network option; the service downloads inputs itself and outputs are files", [
    "method", "headers", "user_agent", "user-agent", "cookies", "listen", "timeout", "rw_timeout", "reconnect",
    "reconnect_at_eof", "reconnect_streamed", "reconnect_on_network_error", "reconnect_delay_max", "http_proxy",
    "multiple_requests", "seekable", "icy", "referer", "auth_type", "send_expect_100", "content_type", "chunked_post",
    "tls_verify", "ca_file", "cert_file", "key_file", "http_persistent", "hls_base_url",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "prints information and exits without producing any output", [
    "h", "help", "?", "-help", "L", "version", "buildconf", "formats", "muxers", "demuxers", "devices", "codecs", "decoders",
    "encoders", "bsfs", "protocols", "filters", "pix_fmts", "layouts", "sample_fmts", "dispositions", "colors", "sources",
    "sinks", "hwaccels",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "only prints diagnostics, which the service does not return", [
    "benchmark", "benchmark_all", "dump", "hex", "debug_ts", "qphist", "psnr",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "reads inputs in real time, which only makes a task slower", ["re", "readrate"]),
  ...refusals("OPTION_NOT_ALLOWED", "names files after the clock, so the service cannot tell which files a task writes", [
    "strftime", "strftime_mkdir", "use_localtime", "use_localtime_mkdir",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "names files by a template the service does not predict; DASH segments keep their default names (init-stream<N>.m4s, chunk-stream<N>-<number>.m4s)", [
    "init_seg_name", "media_seg_name", "single_file_name", "hls_playlist", "hls_master_name",
  ]),
  ...refusals("OPTION_NOT_ALLOWED", "matches files on the transcoder's disk by a pattern", ["pattern_type"]),
  ...refusals("OPTION_NOT_ALLOWED", "can loop an animated input forever", ["ignore_loop"]),
};
