import { AppError } from "../../shared/errors";

const DATA_URI = /^data:([a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*)((?:;[a-z0-9_-]+=[^;,]*)*);base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const CHUNK_CHARS = 64 * 1024;

/**
 * Parses `data:<type>;base64,<data>` into a byte stream of known length, decoding in
 * chunks so the decoded file never sits in memory twice.
 */
export function parseDataUri(data: string): { contentType: string; length: number; body: ReadableStream<Uint8Array> } {
  const match = DATA_URI.exec(data.slice(0, 1024));
  if (!match) {
    throw new AppError("INVALID_DATA_URI", "'data' must be a data URI of the form data:<media_type>;base64,<data> (the media type is required).");
  }
  const raw = data.slice(match[0].length);
  // Line breaks are allowed (RFC 2045 wraps base64 at 76 columns); stripping them copies the
  // whole payload, so only a payload that has them pays for it.
  const payload = /[\r\n\t ]/.test(raw) ? raw.replace(/[\r\n\t ]+/g, "") : raw;
  if (payload.length === 0) throw new AppError("EMPTY_FILE", "The data URI carries no data.");
  if (payload.length % 4 !== 0 || !BASE64.test(payload)) {
    throw new AppError("INVALID_BASE64", "The data URI's payload is not valid base64 (RFC 4648, with padding).");
  }
  const padding = payload.endsWith("==") ? 2 : payload.endsWith("=") ? 1 : 0;
  const length = (payload.length / 4) * 3 - padding;
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= payload.length) return controller.close();
      const binary = atob(payload.slice(offset, offset + CHUNK_CHARS));
      offset += CHUNK_CHARS;
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      controller.enqueue(bytes);
    },
  }, { highWaterMark: 0 });
  return { contentType: match[1]!.toLowerCase(), length, body };
}
