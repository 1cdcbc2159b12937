/**
 * What a command may name in `-f`, `-c` and `-bsf`. Everything here is a plain file format
 * or a software codec of the pinned ffmpeg (Debian's 5.1); devices, network protocols,
 * playlists and script formats that open other files, and hardware codecs are left out.
 */

/**
 * Output formats. Not `tee` / `fifo` (they wrap arbitrary outputs, URLs included), not `dash`
 * (its file naming is not ours to predict), not `null` (a task must produce files), and no
 * devices or network muxers (`rtp`, `rtsp`, `udp`...).
 */
export const MUXERS: ReadonlySet<string> = new Set([
  "mp4", "mov", "ipod", "matroska", "webm", "mpegts", "hls", "segment", "stream_segment", "ssegment",
  "image2", "gif", "apng", "webp", "avif", "mp3", "adts", "ogg", "oga", "opus", "wav", "flac",
  "srt", "webvtt", "ass",
]);

/** What `-f segment` may write each segment as: single-file formats, not playlists or image sequences. */
export const SEGMENT_FORMATS: ReadonlySet<string> = new Set([
  "mp4", "mov", "matroska", "webm", "mpegts", "mp3", "adts", "ogg", "opus", "wav", "flac", "webvtt",
]);

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
 * Extensions an output (or a segment / playlist it writes) may have: media, images, subtitles
 * and HLS playlists. No `.mpd` (the dash muxer is not allowed) and no text or script formats.
 */
export const OUTPUT_EXTENSIONS: ReadonlySet<string> = new Set([
  "mp4", "m4a", "m4v", "mov", "mkv", "mka", "webm", "ts", "m3u8", "m4s", "mp3", "aac", "ogg", "oga", "opus",
  "wav", "flac", "gif", "png", "apng", "jpg", "jpeg", "webp", "avif", "srt", "vtt", "ass",
]);

/**
 * Extensions of input URLs that are playlists or scripts naming other files. The transcoder
 * probes every download with a format allow-list anyway; refusing these up front gives the
 * user an answer before anything is fetched.
 */
export const PLAYLIST_EXTENSIONS: ReadonlySet<string> = new Set(["m3u8", "m3u", "mpd", "ffconcat", "sdp", "pls"]);
