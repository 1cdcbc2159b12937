import { z } from "zod";

/**
 * Demuxers an input may be read with. Everything else is refused, above all the formats that
 * make ffmpeg open other files or devices: playlists (hls, dash), scripts (concat/ffconcat),
 * generators (lavfi), text-as-video (tty), image sequences (image2), session descriptions (sdp).
 * ffmpeg matches this list against every comma-separated part of a demuxer's name, so "mp4"
 * admits the demuxer called "mov,mp4,m4a,3gp,3g2,mj2".
 */
export const ALLOWED_DEMUXERS = [
  // video containers and elementary streams
  "mov", "mp4", "matroska", "webm", "avi", "flv", "mpegts", "mpeg", "mpegvideo", "m4v", "h264", "hevc", "ogg", "asf", "mxf",
  "ivf", "nut", "gif", "yuv4mpegpipe", "dv", "obu",
  // audio
  "wav", "w64", "mp3", "flac", "aac", "ac3", "eac3", "aiff", "caf", "amr", "au", "wv", "dts", "truehd", "tta", "ape",
  // single images, as detected from their bytes
  "png_pipe", "jpeg_pipe", "webp_pipe", "bmp_pipe", "tiff_pipe", "gif_pipe", "qoi_pipe",
  // subtitles
  "srt", "webvtt", "ass",
] as const;

/** ffmpeg's own enforcement of the list, passed as `-format_whitelist` to ffprobe and to every input of ffmpeg. */
export const FORMAT_WHITELIST = ALLOWED_DEMUXERS.join(",");

/** True when a demuxer name (ffmpeg's may list several: "mov,mp4,m4a,...") is on the allow-list. */
export function isAllowedFormat(formatName: string): boolean {
  return formatName.split(",").some((part) => (ALLOWED_DEMUXERS as readonly string[]).includes(part));
}

const FormatSchema = z.object({ format: z.looseObject({ format_name: z.string() }) });

/** The demuxer name in ffprobe's `-show_entries format=format_name -of json`; undefined when it is not that. */
export function parseFormatName(json: string): string | undefined {
  try {
    const result = FormatSchema.safeParse(JSON.parse(json));
    return result.success ? result.data.format.format_name : undefined;
  } catch {
    return undefined;
  }
}
