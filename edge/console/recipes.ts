/** What a recipe's input must be; the composer fills it from the user's files of that kind. */
export type RecipeInputKind = "video" | "image" | "subtitles";

export interface Recipe {
  id: string;
  title: string;
  description: string;
  /** The inputs the command names, in `-i` order; `{video}`, `{image}`, `{subtitles}` in the command stand for their URLs. */
  inputs: RecipeInputKind[];
  command: string;
}

/**
 * The composer's command library: each is a command the policy accepts once its inputs are
 * URLs (test/edge/console-api/recipes.test.ts submits every one to POST /v1/tasks/validate).
 */
export const RECIPES: readonly Recipe[] = [
  {
    id: "thumbnail", title: "Thumbnail", inputs: ["video"],
    description: "One JPEG frame from 1 s in, 640 px wide.",
    command: "ffmpeg -ss 1 -i {video} -frames:v 1 -vf scale=640:-2 thumbnail.jpg",
  },
  {
    id: "gif", title: "GIF", inputs: ["video"],
    description: "The first 3 s as a looping GIF with its own palette, 480 px wide at 10 fps.",
    command: 'ffmpeg -t 3 -i {video} -vf "fps=10,scale=480:-2:flags=lanczos,split[a][b];[a]palettegen[p];[b][p]paletteuse" -loop 0 clip.gif',
  },
  {
    id: "hls", title: "HLS ladder", inputs: ["video"],
    description: "720p and 360p renditions with sound, 4 s segments and a master playlist (master.m3u8).",
    command:
      'ffmpeg -i {video} -filter_complex "[0:v]split=2[a][b];[a]scale=-2:720[v0];[b]scale=-2:360[v1]" -map "[v0]" -map 0:a -map "[v1]" -map 0:a ' +
      '-c:v libx264 -preset veryfast -b:v:0 2800k -b:v:1 800k -c:a aac -b:a 128k -f hls -hls_time 4 -hls_playlist_type vod ' +
      '-var_stream_map "v:0,a:0 v:1,a:1" -master_pl_name master.m3u8 -hls_segment_filename "stream_%v_%03d.ts" "stream_%v.m3u8"',
  },
  {
    id: "audio", title: "Extract audio", inputs: ["video"],
    description: "The sound track as a variable-bitrate MP3.",
    command: "ffmpeg -i {video} -vn -c:a libmp3lame -q:a 2 audio.mp3",
  },
  {
    id: "trim", title: "Trim", inputs: ["video"],
    description: "5 s starting at 1 s, re-encoded so the cut is exact.",
    command: "ffmpeg -ss 1 -i {video} -t 5 -c:v libx264 -preset veryfast -c:a aac trimmed.mp4",
  },
  {
    id: "watermark", title: "Watermark", inputs: ["video", "image"],
    description: "An image (a PNG logo) 120 px wide in the bottom-right corner.",
    command: 'ffmpeg -i {video} -i {image} -filter_complex "[1:v]scale=120:-1[logo];[0:v][logo]overlay=W-w-10:H-h-10" -c:a copy watermarked.mp4',
  },
  {
    id: "subtitles", title: "Burn in subtitles", inputs: ["video", "subtitles"],
    description: "Draws an SRT, VTT or ASS file's subtitles into the picture.",
    command: "ffmpeg -i {video} -i {subtitles} -vf subtitles={subtitles} -c:a copy subtitled.mp4",
  },
];

/** A recipe's command with its inputs' URLs in place. */
export function fillRecipe(recipe: Recipe, urls: Partial<Record<RecipeInputKind, string>>): string {
  return recipe.command.replace(/\{(video|image|subtitles)\}/g, (placeholder, kind: RecipeInputKind) => urls[kind] ?? placeholder);
}
