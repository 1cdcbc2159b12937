import { AppError } from "../../../shared/errors";

/**
 * The tus 1.0 resumable upload protocol, core plus the creation, termination and expiration
 * extensions: https://tus.io/protocols/resumable-upload
 */
export const TUS_VERSION = "1.0.0";
export const TUS_EXTENSIONS = "creation,termination,expiration";
export const OFFSET_OCTET_STREAM = "application/offset+octet-stream";

/** Headers a browser client (Uppy, tus-js-client) must be allowed to send and to read. */
export const TUS_REQUEST_HEADERS = [
  "Authorization", "Content-Type", "Idempotency-Key", "Tus-Resumable", "Upload-Length", "Upload-Metadata",
  "Upload-Offset", "X-HTTP-Method-Override", "X-Requested-With",
];
export const TUS_RESPONSE_HEADERS = [
  "Location", "Tus-Resumable", "Tus-Version", "Tus-Extension", "Tus-Max-Size", "Upload-Offset", "Upload-Length",
  "Upload-Metadata", "Upload-Expires", "Upload-Record", "Idempotent-Replayed", "Retry-After",
];

const MAX_METADATA_CHARS = 4096;
const METADATA_KEY = /^[^\s,]+$/;

export interface UploadMetadata {
  /** The header as sent, repeated verbatim by HEAD. */
  raw: string | null;
  filename?: string;
  filetype?: string;
}

/** `Upload-Length` / `Upload-Offset`: a non-negative decimal integer. */
export function parseByteCount(name: string, value: string | undefined): number {
  if (value === undefined || !/^\d{1,16}$/.test(value.trim())) {
    throw new AppError("VALIDATION_FAILED", `${name} must be a non-negative integer number of bytes.`);
  }
  return Number(value.trim());
}

/**
 * `Upload-Metadata`: comma-separated `key base64value` pairs. tus-js-client sends `filename`
 * and `filetype`; Uppy also sends `name` and `type`, read as fallbacks.
 */
export function parseMetadata(header: string | undefined): UploadMetadata {
  if (header === undefined || header.trim() === "") return { raw: null };
  if (header.length > MAX_METADATA_CHARS) throw invalidMetadata(`is longer than ${MAX_METADATA_CHARS} characters`);
  const pairs = new Map<string, string>();
  for (const pair of header.split(",")) {
    const [key, value, ...rest] = pair.trim().split(" ");
    if (!key || !METADATA_KEY.test(key) || rest.length > 0) throw invalidMetadata("must be comma-separated 'key base64value' pairs");
    if (pairs.has(key)) throw invalidMetadata(`names '${key}' twice`);
    pairs.set(key, value === undefined ? "" : decodeBase64Text(key, value));
  }
  return { raw: header.trim(), filename: pairs.get("filename") || pairs.get("name") || undefined, filetype: pairs.get("filetype") || pairs.get("type") || undefined };
}

function decodeBase64Text(key: string, value: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) throw invalidMetadata(`has a value for '${key}' that is not base64`);
  const binary = atob(value);
  return new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)));
}

function invalidMetadata(problem: string): AppError {
  return new AppError("VALIDATION_FAILED", `Upload-Metadata ${problem}.`);
}
