import { FFedgeError } from "./errors.js";
import { type HttpOptions, request, requestJson, sleep, throwIfAborted } from "./http.js";
import { openFile } from "./local.js";
import type { SignUploadResponse, UploadLimits, UploadProgress, UploadRecord } from "./types.js";

export interface UploadOptions {
  /** The stored name; defaults to the path's base name or the File's name. */
  filename?: string;
  /** The declared type; defaults to the Blob's type, then one guessed from the extension. The service checks it against the bytes. */
  contentType?: string;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
  /** Forces a path; `auto` (the default) chooses by size and the deployment's limits. */
  method?: UploadMethod;
}

export type UploadMethod = "auto" | "multipart" | "tus" | "presigned";

export interface UploadTuning {
  /** Files up to this size (and within the request body limit) go as one multipart request. */
  multipartMaxBytes: number;
  /** The largest tus PATCH; also kept below the request body limit. */
  tusChunkBytes: number;
}

export const DEFAULT_TUNING: UploadTuning = { multipartMaxBytes: 64 * 1024 * 1024, tusChunkBytes: 50 * 1024 * 1024 };
/** Room for the multipart envelope and headers under the request body limit. */
const ENVELOPE_BYTES = 64 * 1024;
const TUS = { "tus-resumable": "1.0.0" };

export interface UploadContext {
  http: HttpOptions;
  tuning: UploadTuning;
  limits(): Promise<UploadLimits>;
}

/** A file for upload: a local path (Node, Deno, Bun) or any Blob/File. */
export async function source(input: string | Blob, options: UploadOptions): Promise<{ blob: Blob; name: string; type: string }> {
  const opened = typeof input === "string" ? await openFile(input) : { blob: input, name: (input as File).name ?? "upload.bin" };
  const name = options.filename ?? opened.name;
  const type = options.contentType || opened.blob.type || guessType(name);
  return { blob: opened.blob, name, type };
}

/** Chooses the upload path (docs/uploads.md, "which path to use") and sends the file. */
export async function uploadBlob(ctx: UploadContext, file: { blob: Blob; name: string; type: string }, options: UploadOptions): Promise<UploadRecord> {
  const limits = await ctx.limits();
  const size = file.blob.size;
  if (size > limits.max_upload_bytes) {
    throw new FFedgeError({ type: "about:blank", status: 413, code: "PAYLOAD_TOO_LARGE", title: "File too large", detail: `${file.name} is ${size} bytes; this deployment stores files of at most ${limits.max_upload_bytes} bytes.` });
  }
  const method = options.method ?? "auto";
  let bodyLimit = limits.max_request_body_bytes;
  const multipartFits = size + ENVELOPE_BYTES <= limits.max_request_body_bytes;
  if (method === "multipart" || (method === "auto" && multipartFits && size <= ctx.tuning.multipartMaxBytes)) {
    try {
      return await multipart(ctx, file, options);
    } catch (error) {
      if (method === "multipart" || !(error instanceof FFedgeError && error.code === "REQUEST_TOO_LARGE")) throw error;
      // The service (or a proxy before it) takes less than /v1/me said: its problem names the real limit.
      const named = Number(error.problem.limit);
      bodyLimit = Number.isSafeInteger(named) && named > 0 ? named : Math.floor(size / 2);
    }
  }
  if (method !== "tus") {
    const signed = await presign(ctx, file, options.signal);
    if (signed) return presignedPut(ctx, file, signed, options);
    if (method === "presigned") throw FFedgeError.local("NOT_SUPPORTED", "Presigned upload unavailable", "This deployment signs uploads to itself, not to separate storage: use tus.");
  }
  return tus(ctx, file, options, bodyLimit);
}

async function multipart(ctx: UploadContext, file: { blob: Blob; name: string; type: string }, options: UploadOptions): Promise<UploadRecord> {
  const form = new FormData();
  form.append("file", file.blob.type === file.type ? file.blob : new Blob([file.blob], { type: file.type }), file.name);
  options.onProgress?.({ loaded: 0, total: file.blob.size, method: "multipart" });
  const record = await requestJson<UploadRecord>(ctx.http, "/api/upload/file", { method: "POST", body: form, headers: { "idempotency-key": crypto.randomUUID() }, signal: options.signal });
  options.onProgress?.({ loaded: file.blob.size, total: file.blob.size, method: "multipart" });
  return record;
}

/** The signed PUT target when it is storage other than this Worker (production R2); undefined when tus is the way. */
async function presign(ctx: UploadContext, file: { blob: Blob; name: string; type: string }, signal?: AbortSignal): Promise<SignUploadResponse | undefined> {
  const response = await request(ctx.http, "/v1/uploads/sign", {
    json: { filename: file.name, size: file.blob.size, content_type: file.type },
    headers: { "idempotency-key": crypto.randomUUID() },
    accept: [413],
    signal,
  });
  if (response.status === 413) {
    await response.body?.cancel();
    return undefined;
  }
  const signed = (await response.json()) as SignUploadResponse;
  return new URL(signed.upload_url).origin === new URL(ctx.http.baseUrl).origin ? undefined : signed;
}

async function presignedPut(ctx: UploadContext, file: { blob: Blob; name: string; type: string }, signed: SignUploadResponse, options: UploadOptions): Promise<UploadRecord> {
  options.onProgress?.({ loaded: 0, total: file.blob.size, method: "presigned" });
  await request(ctx.http, signed.upload_url, { method: "PUT", body: file.blob, headers: { "content-type": signed.content_type }, absolute: true, auth: false, signal: options.signal });
  options.onProgress?.({ loaded: file.blob.size, total: file.blob.size, method: "presigned" });
  return { url: signed.public_url, cn_url: signed.public_url, key: signed.key, md5: "", size: file.blob.size, content_type: signed.content_type, expires_at: signed.expires_at };
}

/**
 * tus 1.0 over fetch: create, then PATCH chunks below the request body limit. After a dropped
 * connection or a refused PATCH it asks HEAD for the stored offset and goes on from there.
 */
async function tus(ctx: UploadContext, file: { blob: Blob; name: string; type: string }, options: UploadOptions, bodyLimit: number): Promise<UploadRecord> {
  const size = file.blob.size;
  const { signal, onProgress } = options;
  const created = await request(ctx.http, "/api/upload/tus", {
    method: "POST",
    headers: { ...TUS, "upload-length": String(size), "upload-metadata": `filename ${base64(file.name)},filetype ${base64(file.type)}`, "idempotency-key": crypto.randomUUID() },
    signal,
  });
  const location = new URL(created.headers.get("location") ?? "", ctx.http.baseUrl).href;
  let chunk = Math.max(1, Math.min(ctx.tuning.tusChunkBytes, bodyLimit - ENVELOPE_BYTES));
  let offset = 0;
  let failures = 0;
  let recordHeader: string | null = null;
  onProgress?.({ loaded: 0, total: size, method: "tus" });
  while (offset < size) {
    throwIfAborted(signal);
    const end = Math.min(size, offset + chunk);
    let response: Response | undefined;
    try {
      response = await request(ctx.http, location, {
        method: "PATCH",
        absolute: true,
        retry: false,
        ...chunkBody(file.blob.slice(offset, end), (sent) => onProgress?.({ loaded: offset + sent, total: size, method: "tus" })),
        headers: { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": String(offset) },
        accept: [400, 409, 413, 423, 429, 500, 502, 503, 504],
        signal,
      });
    } catch (error) {
      if (!(error instanceof FFedgeError) || error.code !== "NETWORK_ERROR") throw error;
    }
    if (response?.status === 204) {
      offset = Number(response.headers.get("upload-offset"));
      recordHeader = response.headers.get("upload-record");
      failures = 0;
      onProgress?.({ loaded: offset, total: size, method: "tus" });
      continue;
    }
    const problem = response ? await response.json().catch(() => undefined) as { code?: string } | undefined : undefined;
    if (response?.status === 413 && problem?.code !== "PAYLOAD_TOO_LARGE" && chunk > 1) chunk = Math.ceil(chunk / 2);
    else if (response && response.status < 500 && response.status !== 429 && !RESUMABLE_CODES.has(problem?.code ?? "")) throw new FFedgeError({ type: "about:blank", title: "Upload failed", detail: `PATCH answered ${response.status}.`, code: "INTERNAL", ...problem, status: response.status } as never);
    if (++failures > ctx.http.maxRetries + 6) throw FFedgeError.local("NETWORK_ERROR", "Upload failed", `The upload of ${file.name} stopped at byte ${offset} of ${size} after ${failures} failed attempts.`);
    await sleep(Math.min(1000 * failures, 5000) * Math.random(), signal);
    const head = await request(ctx.http, location, { method: "HEAD", absolute: true, headers: TUS, signal });
    offset = Number(head.headers.get("upload-offset"));
    recordHeader = head.headers.get("upload-record");
    onProgress?.({ loaded: offset, total: size, method: "tus" });
  }
  if (recordHeader) return JSON.parse(recordHeader) as UploadRecord;
  return requestJson<UploadRecord>(ctx.http, `${location}/record`, { absolute: true, signal });
}

/**
 * In Node, the chunk goes as a stream that counts its bytes, so progress moves within a 50 MiB
 * PATCH. Elsewhere it stays a Blob: browsers send stream bodies only over HTTP/2 and Workers
 * need a known length, and there progress moves once per chunk.
 */
function chunkBody(chunk: Blob, onSent: (sent: number) => void): { body: BodyInit; duplex?: "half" } {
  const runtime = (globalThis as { process?: { release?: { name?: string } } }).process?.release?.name;
  if (runtime !== "node" || typeof navigator !== "undefined" && navigator.userAgent?.startsWith("Cloudflare")) return { body: chunk };
  let sent = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(bytes, controller) {
      sent += bytes.byteLength;
      controller.enqueue(bytes);
      onSent(sent);
    },
  });
  return { body: chunk.stream().pipeThrough(counter), duplex: "half" };
}

/** tus answers after which the stored offset is still good: ask HEAD and continue. */
const RESUMABLE_CODES = new Set(["UPLOAD_INTERRUPTED", "UPLOAD_OFFSET_MISMATCH", "UPLOAD_LOCKED", "STORAGE_UNAVAILABLE"]);

function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

const TYPES: Record<string, string> = {
  mp4: "video/mp4", m4v: "video/mp4", mov: "video/quicktime", mkv: "video/x-matroska", webm: "video/webm", avi: "video/x-msvideo", ts: "video/mp2t",
  mp3: "audio/mpeg", m4a: "audio/mp4", aac: "audio/aac", wav: "audio/wav", flac: "audio/flac", ogg: "audio/ogg", opus: "audio/ogg",
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  srt: "application/x-subrip", vtt: "text/vtt", txt: "text/plain",
};

export function guessType(name: string): string {
  const extension = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return TYPES[extension] ?? "application/octet-stream";
}
