import { AwsClient } from "aws4fetch";
import { AppError } from "../../shared/errors";
import { guardedFetch } from "../lib/guarded-fetch";

/** Where a destination's objects live. `endpoint` is an origin (`https://host`), or null for AWS S3 in `region`. */
export interface S3Target {
  endpoint: string | null;
  region: string;
  bucket: string;
  path_style: boolean;
}

export interface S3Credentials {
  access_key_id: string;
  secret_access_key: string;
}

/** A body with its length: S3's PutObject needs Content-Length (it takes no chunked upload without the streaming-signature scheme). */
export interface S3Body {
  stream: ReadableStream<Uint8Array> | string;
  length: number;
  contentType: string;
}

/** Codes S3-compatible servers answer when the key pair itself is wrong (AWS, R2, MinIO, GCS interop). */
const CREDENTIAL_CODES = new Set(["InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "InvalidSecurity", "InvalidClientTokenId", "Unauthorized"]);

/** The object's URL: `<endpoint>/<bucket>/<key>` in path style, else `<bucket>.<host>/<key>`. Keys hold only characters S3 needs no encoding for. */
export function objectUrl(target: S3Target, key: string): string {
  const origin = new URL(target.endpoint ?? `https://s3.${target.region}.amazonaws.com`);
  const path = key.split("/").map(encodeURIComponent).join("/");
  return target.path_style ? `${origin.origin}/${target.bucket}/${path}` : `${origin.protocol}//${target.bucket}.${origin.host}/${path}`;
}

/**
 * PutObject, the body streamed as it comes (UNSIGNED-PAYLOAD: the signature covers the
 * headers, the payload is not hashed first, so nothing is buffered). A single PUT takes up to
 * 5 GB on S3, more than MAX_UPLOAD_BYTES lets an output grow to.
 */
export async function putObject(env: Env, target: S3Target, credentials: S3Credentials, key: string, body: S3Body, timeoutMs: number): Promise<string> {
  const url = objectUrl(target, key);
  const stream = typeof body.stream === "string" ? body.stream : fixedLength(body.stream, body.length);
  await send(env, target, credentials, { method: "PUT", url, action: "write", key, headers: { "content-type": body.contentType }, body: stream, timeoutMs });
  return url;
}

export async function deleteObject(env: Env, target: S3Target, credentials: S3Credentials, key: string, timeoutMs: number): Promise<void> {
  await send(env, target, credentials, { method: "DELETE", url: objectUrl(target, key), action: "delete", key, timeoutMs });
}

interface S3Request {
  method: "PUT" | "DELETE";
  url: string;
  action: string;
  key: string;
  headers?: Record<string, string>;
  body?: BodyInit;
  timeoutMs: number;
}

/**
 * One signed request through the guarded fetcher: the URL policy judges the destination's host
 * on every request (not only when it was saved), and a redirect is an answer, never followed.
 */
async function send(env: Env, target: S3Target, credentials: S3Credentials, request: S3Request): Promise<void> {
  const client = new AwsClient({ accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key, service: "s3", region: target.region });
  const signed = await client.sign(request.url, { method: request.method, headers: request.headers });
  const host = new URL(request.url).host;
  let response: Response;
  try {
    ({ response } = await guardedFetch(env, request.url, { method: request.method, headers: signed.headers, body: request.body, timeoutMs: request.timeoutMs, followRedirects: false }));
  } catch (error) {
    if (error instanceof AppError && (error.code === "URL_UNREACHABLE" || error.code === "URL_TIMEOUT")) {
      throw new AppError("DESTINATION_UNREACHABLE", `The destination ${host} could not be reached: ${error.detail}`);
    }
    throw error;
  }
  if (response.ok) {
    await response.body?.cancel();
    return;
  }
  throw await refusal(response, host, request);
}

/** An S3 error document is small; a server of the user's choosing may send any size, so no more than this is read. */
const ERROR_BODY_BYTES = 4096;

async function refusal(response: Response, host: string, request: S3Request): Promise<AppError> {
  // A body that breaks off leaves the status to name the refusal.
  const text = await leadingText(response, ERROR_BODY_BYTES).catch(() => "");
  // Only S3's own shape of code; the message without control characters: both reach terminals (the CLI prints `detail`).
  const code = /<Code>([A-Za-z0-9.]{1,64})<\/Code>/.exec(text)?.[1] ?? `HTTP${response.status}`;
  const message = /<Message>([^<]{1,300})<\/Message>/.exec(text)?.[1]?.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
  const said = `${code}${message ? ` (${message})` : ""}`;
  if (CREDENTIAL_CODES.has(code)) {
    return new AppError("DESTINATION_CREDENTIALS", `${host} did not accept the destination's access key: ${said}.`, { s3_code: code });
  }
  return new AppError("DESTINATION_REFUSED", `${host} refused to ${request.action} '${request.key}': ${said}.`, { s3_code: code, s3_status: response.status });
}

/** The first `limit` bytes of the body as text; the rest is never read. */
async function leadingText(response: Response, limit: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // Cancelling tells the server to stop; one that already closed has nothing left to stop.
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes.subarray(0, limit));
}

/** The stream with its length declared, so the PUT carries Content-Length instead of a chunked body. */
function fixedLength(stream: ReadableStream<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  const { readable, writable } = new FixedLengthStream(length);
  // A broken source errors `readable`, which fails the PUT: the error is the fetch's.
  stream.pipeTo(writable).catch(() => {});
  return readable;
}
