import { evaluateConstant } from "./expression";

/**
 * Parsers for the value syntaxes ffmpeg accepts, so caps can be applied to what ffmpeg will
 * actually use. Each returns undefined for text it does not understand; callers refuse that
 * rather than guess, so a value ffmpeg reads differently can never slip under a cap.
 */

export interface VideoSize {
  width: number;
  height: number;
}

/** libavutil/parseutils.c `video_size_abbrs`. */
const VIDEO_SIZE_NAMES: Readonly<Record<string, readonly [number, number]>> = {
  ntsc: [720, 480], pal: [720, 576], qntsc: [352, 240], qpal: [352, 288], sntsc: [640, 480], spal: [768, 576],
  film: [352, 240], "ntsc-film": [352, 240], sqcif: [128, 96], qcif: [176, 144], cif: [352, 288], "4cif": [704, 576],
  "16cif": [1408, 1152], qqvga: [160, 120], qvga: [320, 240], vga: [640, 480], svga: [800, 600], xga: [1024, 768],
  uxga: [1600, 1200], qxga: [2048, 1536], sxga: [1280, 1024], qsxga: [2560, 2048], hsxga: [5120, 4096],
  wvga: [852, 480], wxga: [1366, 768], wsxga: [1600, 1024], wuxga: [1920, 1200], woxga: [2560, 1600],
  wqsxga: [3200, 2048], wquxga: [3840, 2400], whsxga: [6400, 4096], whuxga: [7680, 4800], cga: [320, 200],
  ega: [640, 350], hd480: [852, 480], hd720: [1280, 720], hd1080: [1920, 1080], "2k": [2048, 1080],
  "2kflat": [1998, 1080], "2kscope": [2048, 858], "4k": [4096, 2160], "4kflat": [3996, 2160], "4kscope": [4096, 1716],
  nhd: [640, 360], hqvga: [240, 160], wqvga: [400, 240], fwqvga: [432, 240], hvga: [480, 320], qhd: [960, 540],
  "2kdci": [2048, 1080], "4kdci": [4096, 2160], uhd2160: [3840, 2160], uhd4320: [7680, 4320],
};

/** libavutil/parseutils.c `video_rate_abbrs`. */
export const FRAME_RATE_NAMES: Readonly<Record<string, number>> = {
  ntsc: 30000 / 1001, pal: 25, qntsc: 30000 / 1001, qpal: 25, sntsc: 30000 / 1001, spal: 25,
  film: 24, "ntsc-film": 24000 / 1001,
};

/**
 * A size name such as `hd720`, or `av_parse_video_size`'s `WxH`: two `strtol` numbers (sign
 * and leading blanks allowed) around any one separator character, both positive.
 */
export function parseVideoSize(text: string): VideoSize | undefined {
  const named = VIDEO_SIZE_NAMES[text];
  if (named) return { width: named[0], height: named[1] };
  const width = strtol(text, 0);
  const separator = width.end < text.length ? width.end + 1 : width.end;
  const height = strtol(text, separator);
  if (height.end !== text.length || !(width.value > 0) || !(height.value > 0)) return undefined;
  return { width: width.value, height: height.value };
}

/** C's `strtol(text + start, &end, 10)`: no digits reads 0 and consumes nothing. */
function strtol(text: string, start: number): { value: number; end: number } {
  const match = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(text.slice(start));
  return match ? { value: Number(match[1]), end: start + match[0].length } : { value: 0, end: start };
}

/** `25`, `29.97`, `30000/1001`, `24:1`, `1e3`, or a rate name such as `ntsc` (`av_parse_video_rate` evaluates expressions). */
export function parseFrameRate(text: string): number | undefined {
  const named = FRAME_RATE_NAMES[text];
  if (named !== undefined) return named;
  const ratio = /^(\d{1,9}):(\d{1,9})$/.exec(text);
  if (ratio) return Number(ratio[2]) === 0 ? undefined : Number(ratio[1]) / Number(ratio[2]);
  const rate = evaluateConstant(text);
  return rate !== undefined && Number.isFinite(rate) ? rate : undefined;
}

/**
 * ffmpeg's duration syntax (`av_parse_time` for durations): `[-][HH:]MM:SS[.m...]` or
 * `[-]S+[.m...][s|ms|us]`. Returns seconds.
 */
export function parseDuration(text: string): number | undefined {
  const clock = /^(-)?(?:(\d{1,9}):)?([0-5]?\d):([0-5]?\d)(\.\d+)?$/.exec(text);
  if (clock) {
    const seconds = Number(clock[2] ?? 0) * 3600 + Number(clock[3]) * 60 + Number(clock[4]) + Number(clock[5] ?? 0);
    return clock[1] ? -seconds : seconds;
  }
  const plain = /^(-)?(\d{1,12})(\.\d*)?(s|ms|us)?$/.exec(text);
  if (!plain) return undefined;
  const scale = plain[4] === "ms" ? 1e-3 : plain[4] === "us" ? 1e-6 : 1;
  const seconds = (Number(plain[2]) + Number(plain[3] && plain[3] !== "." ? plain[3] : 0)) * scale;
  return plain[1] ? -seconds : seconds;
}

/**
 * A number as ffmpeg reads option values: `av_strtod` on the command line (`48k`, `1e4`,
 * `0x7fff`) and `av_expr_parse` for codec and filter options (`(65535)`, `2*1024`); both are
 * read here as a constant expression, so the cap sees the value ffmpeg uses.
 */
export function parseDecimal(text: string): number | undefined {
  return evaluateConstant(text);
}

export function parseInteger(text: string): number | undefined {
  const number = evaluateConstant(text);
  return number !== undefined && Number.isSafeInteger(number) ? number : undefined;
}

/** A bit rate or size: `128k`, `2.5M`, `1Mi`, `1MB` (×8) — av_strtod's prefixes, as a constant expression. */
export function parseQuantity(text: string): number | undefined {
  const number = evaluateConstant(text);
  return number !== undefined && Number.isFinite(number) && number >= 0 ? number : undefined;
}
