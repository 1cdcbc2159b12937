import type { Preset, PresetParameter, PresetParameters } from "../../shared/schemas/presets";

const url = (what: string, example: string): PresetParameter => ({
  type: "string", maxLength: 2048, examples: [example],
  description: `The URL of ${what}: the url of one of your uploads, or a public http(s) URL`,
});
const video = url("the video", "https://example.com/video.mp4");
const seconds = (description: string, fallback: number, minimum = 0, maximum = 10_800): PresetParameter => ({ type: "number", minimum, maximum, default: fallback, description });
const pixels = (description: string, fallback: number, maximum: number): PresetParameter => ({ type: "integer", minimum: 16, maximum, default: fallback, description });

function parameters(properties: Record<string, PresetParameter>, required: string[]): PresetParameters {
  return { type: "object", properties, required };
}

/**
 * The presets every user has: read-only, listed with `builtin: true`, their names reserved.
 * Each is checked like a user's preset (test/edge/presets/builtins.test.ts saves and expands
 * every one), and the e2e test runs some of them on the real stack.
 */
const DEFINITIONS: { name: string; description: string; command: string; parameters: PresetParameters }[] = [
  {
    name: "thumbnail",
    description: "One JPEG frame of the video at a given time, scaled to a width.",
    command: "ffmpeg -ss {{at}} -i {{video}} -frames:v 1 -vf scale={{width}}:-2 thumbnail.jpg",
    parameters: parameters({ video, at: seconds("Where to take the frame, in seconds from the start", 1), width: pixels("The picture's width in pixels (the height keeps the aspect ratio)", 640, 4096) }, ["video"]),
  },
  {
    name: "gif",
    description: "A stretch of the video as a looping GIF with its own palette.",
    command: 'ffmpeg -ss {{start}} -t {{duration}} -i {{video}} -vf "fps={{fps}},scale={{width}}:-2:flags=lanczos,split[a][b];[a]palettegen[p];[b][p]paletteuse" -loop 0 clip.gif',
    parameters: parameters({
      video,
      start: seconds("Where the GIF starts, in seconds", 0),
      duration: seconds("How long it lasts, in seconds", 3, 0.1, 30),
      fps: { type: "integer", minimum: 1, maximum: 30, default: 10, description: "Frames per second" },
      width: pixels("The GIF's width in pixels", 480, 1280),
    }, ["video"]),
  },
  {
    name: "hls-ladder",
    description: "HLS for streaming: 720p and 360p renditions with sound and a master playlist (master.m3u8). The video needs a sound track.",
    command:
      'ffmpeg -i {{video}} -filter_complex "[0:v]split=2[a][b];[a]scale=-2:720[v0];[b]scale=-2:360[v1]" -map "[v0]" -map 0:a -map "[v1]" -map 0:a ' +
      "-c:v libx264 -preset veryfast -b:v:0 2800k -b:v:1 800k -c:a aac -b:a 128k -f hls -hls_time {{segment_seconds}} -hls_playlist_type vod " +
      '-var_stream_map "v:0,a:0 v:1,a:1" -master_pl_name master.m3u8 -hls_segment_filename "stream_%v_%03d.ts" "stream_%v.m3u8"',
    parameters: parameters({ video, segment_seconds: { type: "integer", minimum: 1, maximum: 20, default: 4, description: "Each segment's length in seconds" } }, ["video"]),
  },
  {
    name: "audio-extract",
    description: "The sound track as a variable-bitrate MP3.",
    command: "ffmpeg -i {{video}} -vn -c:a libmp3lame -q:a {{quality}} audio.mp3",
    parameters: parameters({ video, quality: { type: "integer", minimum: 0, maximum: 9, default: 2, description: "LAME's VBR quality: 0 is best, 9 smallest" } }, ["video"]),
  },
  {
    name: "trim",
    description: "A stretch of the video, re-encoded so the cut is exact.",
    command: "ffmpeg -ss {{start}} -i {{video}} -t {{duration}} -c:v libx264 -preset veryfast -c:a aac trimmed.mp4",
    parameters: parameters({ video, start: seconds("Where the cut starts, in seconds", 0), duration: seconds("How long the cut lasts, in seconds", 5, 0.1) }, ["video"]),
  },
  {
    name: "watermark",
    description: "An image (a PNG logo) in the bottom-right corner of the video.",
    command: 'ffmpeg -i {{video}} -i {{image}} -filter_complex "[1:v]scale={{logo_width}}:-1[logo];[0:v][logo]overlay=W-w-{{margin}}:H-h-{{margin}}" -c:a copy watermarked.mp4',
    parameters: parameters({
      video,
      image: url("the image", "https://example.com/logo.png"),
      logo_width: pixels("The logo's width in pixels", 120, 1920),
      margin: { type: "integer", minimum: 0, maximum: 1000, default: 10, description: "Pixels between the logo and the corner" },
    }, ["video", "image"]),
  },
  {
    name: "subtitles-burn-in",
    description: "Draws an SRT, VTT or ASS file's subtitles into the picture.",
    command: "ffmpeg -i {{video}} -i {{subtitles}} -vf subtitles={{subtitles}} -c:a copy subtitled.mp4",
    parameters: parameters({ video, subtitles: url("the subtitles file (.srt, .vtt, .ass or .ssa)", "https://example.com/subtitles.srt") }, ["video", "subtitles"]),
  },
];

export const BUILTIN_PRESETS: readonly Preset[] = DEFINITIONS.map((definition) => ({ id: definition.name, ...definition, destination: null, builtin: true, created_at: null, updated_at: null }));

export function findBuiltinPreset(name: string): Preset | undefined {
  return BUILTIN_PRESETS.find((preset) => preset.name === name);
}
