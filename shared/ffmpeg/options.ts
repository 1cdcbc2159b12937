/**
 * What the parser knows about ffmpeg's options: whether each takes a value and where it
 * may appear. This table is also the allow-list: an option not named here is refused.
 * Names are without the leading dash and without stream specifiers (`c:v` → `c`).
 */
export type OptionScope = "global" | "input" | "output" | "per-file";

export interface OptionRule {
  takesValue: boolean;
  scope: OptionScope;
}

const flag = (scope: OptionScope): OptionRule => ({ takesValue: false, scope });
const value = (scope: OptionScope): OptionRule => ({ takesValue: true, scope });

export const OPTIONS: Record<string, OptionRule> = {
  // global
  hide_banner: flag("global"), loglevel: value("global"), v: value("global"), stats: flag("global"), nostats: flag("global"),
  filter_complex: value("global"), lavfi: value("global"), filter_complex_threads: value("global"), shortest: flag("output"),
  // seeking and duration
  ss: value("per-file"), sseof: value("input"), t: value("per-file"), to: value("per-file"), itsoffset: value("input"),
  accurate_seek: flag("input"), noaccurate_seek: flag("input"), stream_loop: value("input"), re: flag("input"),
  // format and codecs
  f: value("per-file"), c: value("per-file"), codec: value("per-file"), vcodec: value("per-file"), acodec: value("per-file"), scodec: value("per-file"),
  // video
  vf: value("output"), filter: value("output"), af: value("output"), r: value("per-file"), s: value("per-file"), aspect: value("output"),
  pix_fmt: value("per-file"), b: value("output"), maxrate: value("output"), minrate: value("output"), bufsize: value("output"),
  crf: value("output"), qp: value("output"), preset: value("output"), tune: value("output"), profile: value("output"), level: value("output"),
  g: value("output"), keyint_min: value("output"), bf: value("output"), sc_threshold: value("output"), "x264-params": value("output"), "x265-params": value("output"),
  "frames": value("output"), vframes: value("output"), aframes: value("output"), fps_mode: value("output"), vsync: value("output"),
  q: value("output"), qscale: value("output"), "cpu-used": value("output"), deadline: value("output"), "row-mt": value("output"), "tile-columns": value("output"),
  an: flag("per-file"), vn: flag("per-file"), sn: flag("per-file"), dn: flag("per-file"),
  // audio
  ar: value("per-file"), ac: value("per-file"), sample_fmt: value("per-file"), vol: value("output"), "ab": value("output"),
  // mapping and metadata
  map: value("output"), map_metadata: value("output"), map_chapters: value("output"), metadata: value("output"), disposition: value("output"),
  movflags: value("output"), threads: value("per-file"), copyts: flag("global"), start_at_zero: flag("global"), avoid_negative_ts: value("output"),
  // muxers (segment / HLS / image sequences)
  hls_time: value("output"), hls_list_size: value("output"), hls_segment_filename: value("output"), hls_playlist_type: value("output"),
  hls_flags: value("output"), segment_time: value("output"), segment_format: value("output"), reset_timestamps: value("output"),
  start_number: value("per-file"), update: value("output"), loop: value("per-file"), framerate: value("input"),
  strict: value("output"), tag: value("output"), fflags: value("per-file"), max_muxing_queue_size: value("output"),
};

/** Options that belong to the service: it sets them itself, so a command may not. */
export const RESERVED_OPTIONS = new Set([
  "y", "n", "nostdin", "progress", "protocol_whitelist", "protocol_blacklist", "safe", "allowed_extensions",
  "report", "stdin", "i",
]);

export function baseName(name: string): string {
  return name.split(":")[0]!;
}
