import { z } from "zod";
import { JobFailure } from "../jobs/failure";
import { parseRate, type InputTiming } from "./progress";

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

const ProbeSchema = z.object({
  format: z.looseObject({ format_name: z.string(), duration: z.string().optional() }),
  streams: z.array(
    z.looseObject({
      codec_type: z.string().optional(),
      width: z.number().optional(),
      height: z.number().optional(),
      coded_width: z.number().optional(),
      coded_height: z.number().optional(),
      avg_frame_rate: z.string().optional(),
      r_frame_rate: z.string().optional(),
    }),
  ),
});
export type MediaProbe = z.infer<typeof ProbeSchema>;

/** Parses ffprobe's `-show_format -show_streams -of json`; undefined when it is not that. */
export function parseProbe(json: string): MediaProbe | undefined {
  try {
    const result = ProbeSchema.safeParse(JSON.parse(json));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Refuses an input that is not plain media we accept: a demuxer outside the allow-list, no
 * streams at all, or a video stream declaring more pixels than `maxPixels` (a decompression
 * bomb: a few KB that decode to gigabytes).
 */
export function checkInput(probe: MediaProbe, label: string, maxPixels: number): void {
  const parts = probe.format.format_name.split(",");
  if (!parts.some((part) => (ALLOWED_DEMUXERS as readonly string[]).includes(part))) {
    throw new JobFailure("INPUT_FORMAT_NOT_ALLOWED", `${label} is in the '${probe.format.format_name}' format, which is not accepted.`);
  }
  if (probe.streams.length === 0) throw new JobFailure("INPUT_FORMAT_NOT_ALLOWED", `${label} has no audio, video or subtitle stream.`);
  for (const stream of probe.streams) {
    const pixels = Math.max((stream.width ?? 0) * (stream.height ?? 0), (stream.coded_width ?? 0) * (stream.coded_height ?? 0));
    if (pixels > maxPixels) {
      throw new JobFailure("INPUT_FORMAT_NOT_ALLOWED", `${label} declares ${stream.width}×${stream.height} pixels per frame; the limit is ${maxPixels} pixels.`);
    }
  }
}

/** Duration and frame rate for progress reporting. */
export function timingOf(probe: MediaProbe): InputTiming {
  const timing: InputTiming = {};
  const duration = Number(probe.format.duration);
  if (probe.format.duration !== undefined && Number.isFinite(duration) && duration > 0) timing.durationSeconds = duration;
  const video = probe.streams.find((stream) => stream.codec_type === "video");
  const rate = [video?.avg_frame_rate, video?.r_frame_rate].map((raw) => (raw ? parseRate(raw) : undefined)).find((found) => found !== undefined);
  if (rate !== undefined) timing.frameRate = rate;
  return timing;
}
