import { AppError } from "../../shared/errors";
import { REQUEST_ENVELOPE_BYTES, type config } from "../lib/config";

const DATA_URI = /^data:([a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*)((?:;[a-z0-9_-]+=[^;,]*)*);base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const CHUNK_CHARS = 64 * 1024;

/**
 * The largest JSON body `/api/upload/base64` reads (about 12 MiB of file). A JSON string is
 * held whole before a byte is decoded: the request text (Hono caches it for the request), the
 * parsed `data` string, and with an Idempotency-Key the raw bytes too, so 2-3 times the body,
 * 32-48 MiB at this cap; measured, about 3 times the file (docs/performance.md, "Base64
 * memory"). An isolate has 128 MB for all the requests it serves at once
 * (https://developers.cloudflare.com/workers/platform/limits/#memory): two cap-sized uploads
 * fit beside the Worker's code, where a 32 MiB cap would leave room for one. Larger files go
 * as multipart, a signed PUT or tus, which are streamed.
 */
export const MAX_BASE64_BODY_BYTES = 16 * 1024 * 1024;

/** The JSON body that carries a MAX_UPLOAD_BYTES file as base64. */
export function base64FileLimit(settings: ReturnType<typeof config>): number {
  return Math.ceil((settings.maxUploadBytes * 4) / 3) + REQUEST_ENVELOPE_BYTES;
}

/**
 * The largest JSON body /api/upload/base64 reads: the memory cap, the body of a
 * MAX_UPLOAD_BYTES file, or the platform's request body limit, whichever is least.
 */
export function base64BodyLimit(settings: ReturnType<typeof config>): number {
  return Math.min(MAX_BASE64_BODY_BYTES, base64FileLimit(settings), settings.maxRequestBodyBytes);
}

export function base64TooLarge(): AppError {
  return new AppError(
    "BASE64_TOO_LARGE",
    `A base64 upload body may be at most ${MAX_BASE64_BODY_BYTES} bytes (about ${Math.floor((MAX_BASE64_BODY_BYTES * 3) / 4 / 1024 / 1024)} MiB of file). Send larger files as multipart/form-data to /api/upload/file, with a signed PUT (/v1/uploads/sign) or resumably with tus (/api/upload/tus): those are streamed.`,
    { limit: MAX_BASE64_BODY_BYTES },
  );
}

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
