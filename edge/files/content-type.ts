import { AppError } from "../../shared/errors";

/** How many leading bytes `sniff` needs. */
export const SNIFF_BYTES = 512;

const EXTENSIONS: Record<string, string> = {
  "video/mp4": "mp4", "video/quicktime": "mov", "video/webm": "webm", "video/x-matroska": "mkv",
  "video/x-msvideo": "avi", "video/mp2t": "ts", "video/x-flv": "flv", "video/mpeg": "mpg", "video/ogg": "ogv",
  "audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/aac": "aac", "audio/wav": "wav", "audio/x-wav": "wav",
  "audio/ogg": "ogg", "audio/opus": "opus", "audio/flac": "flac", "audio/webm": "weba",
  "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/avif": "avif",
  "image/bmp": "bmp", "image/tiff": "tiff", "image/svg+xml": "svg",
  "application/x-subrip": "srt", "text/vtt": "vtt", "text/x-ssa": "ass", "text/plain": "txt",
  "application/json": "json", "application/pdf": "pdf", "application/zip": "zip",
  "application/vnd.apple.mpegurl": "m3u8", "text/html": "html", "application/xml": "xml",
  "text/xml": "xml", "text/javascript": "js", "application/javascript": "js", "text/css": "css",
  "application/octet-stream": "bin",
};

const TYPES_BY_EXTENSION: Record<string, string> = Object.fromEntries(
  Object.entries(EXTENSIONS).map(([type, ext]) => [ext, type]).reverse(),
);
Object.assign(TYPES_BY_EXTENSION, { jpeg: "image/jpeg", m4v: "video/mp4", srt: "application/x-subrip", ass: "text/x-ssa", wav: "audio/wav", xml: "application/xml", js: "text/javascript" });

/**
 * The only types the CDN serves inline: passive media a browser displays but never runs.
 * Everything else (HTML, SVG, XML of any flavour, XSL, RDF, scripts, PDF, types nobody has
 * heard of) is served as an attachment: an allow-list, because the list of types some browser
 * renders as a document keeps growing.
 */
export function servedInline(contentType: string): boolean {
  const type = essence(contentType);
  return /^(audio|video)\/[a-z0-9.+-]+$/.test(type) || (/^image\/[a-z0-9.+-]+$/.test(type) && type !== "image/svg+xml") || type === "text/plain";
}

/** "Text/HTML; charset=utf-8" → "text/html"; empty or malformed → "". */
export function essence(contentType: string | undefined | null): string {
  const value = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(value) ? value : "";
}

export function extensionFor(contentType: string, filename?: string): string {
  const fromName = filename ? safeExtension(filename) : undefined;
  if (fromName && TYPES_BY_EXTENSION[fromName] === contentType) return fromName;
  return EXTENSIONS[contentType] ?? fromName ?? "bin";
}

export function typeForExtension(filename: string | undefined): string | undefined {
  const ext = filename ? safeExtension(filename) : undefined;
  return ext ? TYPES_BY_EXTENSION[ext] : undefined;
}

function safeExtension(filename: string): string | undefined {
  const match = /\.([A-Za-z0-9]{1,8})$/.exec(filename);
  return match?.[1]?.toLowerCase();
}

type Family = "video" | "audio" | "image" | "markup" | "other";

/** What the leading bytes say the file is, when they say anything recognisable. */
export function sniff(head: Uint8Array): { type: string; family: Family } | undefined {
  const ascii = (start: number, text: string) => text.split("").every((ch, i) => head[start + i] === ch.charCodeAt(0));
  if (ascii(4, "ftyp")) {
    const brand = String.fromCharCode(...head.subarray(8, 12));
    if (brand.startsWith("qt")) return { type: "video/quicktime", family: "video" };
    if (brand.startsWith("M4A")) return { type: "audio/mp4", family: "audio" };
    if (brand.startsWith("avif") || brand.startsWith("heic")) return { type: "image/avif", family: "image" };
    return { type: "video/mp4", family: "video" };
  }
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return { type: "video/webm", family: "video" };
  if (ascii(0, "RIFF") && ascii(8, "AVI ")) return { type: "video/x-msvideo", family: "video" };
  if (ascii(0, "RIFF") && ascii(8, "WAVE")) return { type: "audio/wav", family: "audio" };
  if (ascii(0, "RIFF") && ascii(8, "WEBP")) return { type: "image/webp", family: "image" };
  if (ascii(0, "FLV")) return { type: "video/x-flv", family: "video" };
  if (head[0] === 0x47 && head[188] === 0x47) return { type: "video/mp2t", family: "video" };
  if (ascii(0, "OggS")) return { type: "audio/ogg", family: "audio" };
  if (ascii(0, "fLaC")) return { type: "audio/flac", family: "audio" };
  if (ascii(0, "ID3") || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0)) return { type: "audio/mpeg", family: "audio" };
  if (head[0] === 0x89 && ascii(1, "PNG")) return { type: "image/png", family: "image" };
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { type: "image/jpeg", family: "image" };
  if (ascii(0, "GIF8")) return { type: "image/gif", family: "image" };
  const text = new TextDecoder().decode(head.subarray(0, SNIFF_BYTES)).trimStart().toLowerCase();
  if (/^(<!doctype html|<html|<script|<svg|<\?xml|<head|<body|<iframe)/.test(text)) return { type: "text/html", family: "markup" };
  return undefined;
}

/**
 * Decides the stored content type from what the client declared, the file name and the bytes.
 * A declared audio/video/image type whose bytes are clearly something else is refused, so a
 * page cannot pose as a video.
 */
export function resolveContentType(declared: string | undefined, filename: string | undefined, head: Uint8Array): string {
  const declaredType = essence(declared);
  const sniffed = sniff(head);
  const generic = declaredType === "" || declaredType === "application/octet-stream";
  if (generic) return sniffed && sniffed.family !== "markup" ? sniffed.type : typeForExtension(filename) ?? "application/octet-stream";
  const family = declaredType.split("/")[0];
  const claimsMedia = (family === "video" || family === "audio" || family === "image") && declaredType !== "image/svg+xml";
  if (claimsMedia && sniffed && (sniffed.family === "markup" || (sniffed.family !== family && !compatible(declaredType, sniffed.type)))) {
    throw new AppError("CONTENT_TYPE_MISMATCH", `The file was declared as ${declaredType} but its bytes are ${sniffed.family === "markup" ? "markup (HTML/XML)" : sniffed.type}.`);
  }
  // Text is never audio, video or an image (SVG aside), yet sniffing cannot name every media
  // format: a "video" whose bytes are plain text is kept, but as the bytes it is.
  if (claimsMedia && !sniffed && isText(head)) return "application/octet-stream";
  return declaredType;
}

/** Whether the leading bytes are printable UTF-8 text (tabs and line breaks included), as no media container is. */
function isText(head: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(trimPartialUtf8(head));
  } catch {
    return false;
  }
  return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
}

/** Drops a multi-byte character cut off at the end of the sniffed bytes: that does not make the file binary. */
function trimPartialUtf8(bytes: Uint8Array): Uint8Array {
  let end = bytes.byteLength;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) !== 0x80) {
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      if (need > back) end -= back;
      break;
    }
  }
  return bytes.subarray(0, end);
}

// Containers whose one signature covers both audio-only and video files.
function compatible(declared: string, sniffed: string): boolean {
  const pairs: Record<string, string[]> = {
    "video/mp4": ["audio/mp4", "audio/aac"], "video/webm": ["audio/webm"], "video/ogg": ["audio/ogg"],
    "audio/webm": ["video/webm", "video/x-matroska"], "audio/ogg": ["video/ogg"], "video/x-matroska": ["video/webm"],
  };
  return pairs[sniffed]?.includes(declared) || pairs[declared]?.includes(sniffed) || false;
}
