/**
 * What a command may name in `-f`, `-c` and `-bsf`. Everything here is a plain file format
 * or a software codec of the pinned ffmpeg (Debian's 5.1); devices, network protocols,
 * playlists and script formats that open other files, and hardware codecs are left out.
 */

/**
 * The muxer ffmpeg picks for an output name without `-f` (libavformat's av_guess_format, by
 * the muxers' "Common extensions" in the pinned ffmpeg). Every extension an output may have
 * maps to an allowed muxer, so a name alone never selects one that is not.
 */
export const EXTENSION_MUXERS: Readonly<Record<string, string>> = {
  mp4: "mp4", m4v: "ipod", m4a: "ipod", mov: "mov", mkv: "matroska", mka: "matroska", webm: "webm", avi: "avi", flv: "flv",
  ts: "mpegts", m3u8: "hls", mpd: "dash", mp3: "mp3", aac: "adts", ogg: "ogg", oga: "oga", opus: "opus", wav: "wav", flac: "flac",
  gif: "gif", apng: "apng", png: "image2", jpg: "image2", jpeg: "image2", webp: "webp", avif: "avif", srt: "srt", vtt: "webvtt", ass: "ass",
};

const MP4_FAMILY = ["mp4", "m4v", "m4a", "mov", "m4s"];
const MATROSKA_FAMILY = ["mkv", "mka", "webm"];
const OGG_FAMILY = ["ogg", "oga", "opus"];

/**
 * What each output format a command may force with `-f` writes, as the extensions its files
 * may have: the name of an output (and so the type the CDN serves it as) agrees with what is
 * in it. Not `tee` / `fifo` (they wrap arbitrary outputs, URLs included), not `null` (a task
 * must produce files), and no devices or network muxers (`rtp`, `rtsp`, `udp`...). `hls` and
 * `dash` write segments next to their playlist under names the service predicts (hlsenc.c,
 * dashenc.c defaults; see DASH_SEGMENT_NAME).
 */
export const MUXER_EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  mp4: MP4_FAMILY, mov: MP4_FAMILY, ipod: MP4_FAMILY, matroska: MATROSKA_FAMILY, webm: MATROSKA_FAMILY, avi: ["avi"], flv: ["flv"],
  mpegts: ["ts"], hls: ["m3u8"], dash: ["mpd"], mp3: ["mp3"], adts: ["aac"], ogg: OGG_FAMILY, oga: OGG_FAMILY, opus: OGG_FAMILY,
  wav: ["wav"], flac: ["flac"], gif: ["gif"], apng: ["apng", "png"], webp: ["webp"], avif: ["avif"],
  image2: ["png", "jpg", "jpeg", "webp", "avif", "gif"], srt: ["srt"], webvtt: ["vtt"], ass: ["ass"],
};

/** Muxers that cut their output into numbered files, each written with a single-file format (SEGMENT_FORMATS). */
export const SEGMENT_MUXERS: ReadonlySet<string> = new Set(["segment", "stream_segment", "ssegment"]);

/** Output formats a command may name with `-f`. */
export const MUXERS: ReadonlySet<string> = new Set([...Object.keys(MUXER_EXTENSIONS), ...SEGMENT_MUXERS]);

/** What `-f segment` may write each segment as: single-file formats, not playlists or image sequences. */
export const SEGMENT_FORMATS: ReadonlySet<string> = new Set([
  "mp4", "mov", "matroska", "webm", "mpegts", "avi", "flv", "mp3", "adts", "ogg", "opus", "wav", "flac", "webvtt",
]);

/**
 * The files the dash muxer writes next to its manifest under its default templates
 * (`init-stream$RepresentationID$.$ext$`, `chunk-stream$RepresentationID$-$Number%05d$.$ext$`):
 * the only names the service lets it use (`-init_seg_name` and `-media_seg_name` are refused).
 */
export const DASH_SEGMENT_NAME = /^(init-stream\d+|chunk-stream\d+-\d{5,})\.(m4s|webm)$/;

/**
 * Forced input formats. Inputs are downloaded files, so only plain file formats: not `lavfi`
 * (generators and `movie=`), `concat` (a script naming other files), `hls` / `dash` (playlists
 * naming other files), devices (`v4l2`, `x11grab`, `fbdev`, `alsa`, `pulse`...), or `tee`.
 */
export const DEMUXERS: ReadonlySet<string> = new Set([
  "mov", "mp4", "matroska", "webm", "mpegts", "mp3", "aac", "wav", "flac", "ogg",
  "image2", "png_pipe", "jpeg_pipe", "webp_pipe", "gif", "srt", "ass", "webvtt", "h264", "hevc",
]);

/** Software encoders of the pinned ffmpeg; `copy` keeps the stream as it is. */
export const ENCODERS: ReadonlySet<string> = new Set([
  "copy",
  // video
  "libx264", "libx264rgb", "libx265", "libvpx", "libvpx-vp9", "libaom-av1", "libsvtav1", "librav1e",
  "mpeg4", "mpeg2video", "mjpeg", "png", "apng", "gif", "libwebp", "libwebp_anim", "prores", "prores_ks",
  "ffv1", "libtheora", "rawvideo",
  // audio
  "aac", "libopus", "opus", "libmp3lame", "flac", "libvorbis", "vorbis", "alac", "ac3", "eac3", "mp2",
  "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_u8", "pcm_s16be", "pcm_mulaw", "pcm_alaw",
  // subtitles
  "mov_text", "srt", "subrip", "webvtt", "ass", "ssa",
]);

/** Software decoders a command may force before `-i`. */
export const DECODERS: ReadonlySet<string> = new Set([
  "h264", "hevc", "vp8", "vp9", "libvpx", "libvpx-vp9", "av1", "libdav1d", "libaom-av1", "mpeg4", "mpeg2video",
  "mjpeg", "png", "gif", "webp", "aac", "mp3", "mp3float", "opus", "libopus", "flac", "vorbis", "libvorbis",
  "pcm_s16le", "srt", "subrip", "webvtt", "ass",
]);

/** Bitstream filters for `-bsf`: packet rewriting only, none opens a file. */
export const BITSTREAM_FILTERS: ReadonlySet<string> = new Set([
  "h264_mp4toannexb", "hevc_mp4toannexb", "aac_adtstoasc", "extract_extradata", "dump_extra", "remove_extra",
  "vp9_superframe", "null", "setts", "h264_metadata", "hevc_metadata",
]);

/**
 * Extensions an output (or a segment / playlist it writes) may have: media, images, subtitles,
 * HLS playlists and DASH manifests, plus `.m4s` for fragmented MP4 segments. No text or script
 * formats.
 */
export const OUTPUT_EXTENSIONS: ReadonlySet<string> = new Set([...Object.keys(EXTENSION_MUXERS), "m4s"]);

/**
 * Extensions of input URLs that are playlists or scripts naming other files. The transcoder
 * probes every download with a format allow-list anyway; refusing these up front gives the
 * user an answer before anything is fetched.
 */
export const PLAYLIST_EXTENSIONS: ReadonlySet<string> = new Set(["m3u8", "m3u", "mpd", "ffconcat", "sdp", "pls"]);
