import { createRoute } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../../shared/errors";
import { Base64UploadSchema, SignUploadRequestSchema, SignUploadResponseSchema, UploadRecordSchema, UrlUploadSchema } from "../../shared/schemas/files";
import { essence, extensionFor } from "../files/content-type";
import { MAX_BASE64_BODY_BYTES, base64BodyLimit, base64FileLimit, base64TooLarge, parseDataUri } from "../files/data-uri";
import { ingestUpload } from "../files/ingest";
import { type FilePart, withFilePart } from "../files/multipart";
import { deleteFile, expiryFrom, insertFile, newUploadKey, publicUrls, sanitizeFilename } from "../files/records";
import { presignR2Put } from "../files/presign";
import { limitRequestBody, requestTooLarge } from "../files/request-body";
import { requireApiKey } from "../accounts/credentials";
import { REQUEST_ENVELOPE_BYTES, config } from "../lib/config";
import { guardedFetch } from "../lib/guarded-fetch";
import { fingerprintOfStream, fingerprintWhileReading, idempotency } from "../lib/idempotency";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { signToken, verifyToken } from "../lib/signed-token";

const SIGNED_URL_TTL_SECONDS = 15 * 60;
const REMOTE_DOWNLOAD_TIMEOUT_MS = 15 * 60 * 1000;

const REQUEST_BODY_413 =
  "or a request body over MAX_REQUEST_BODY_BYTES (GET /v1/me: limits.max_request_body_bytes; Cloudflare itself refuses bodies over 100 MB on Free and Pro, 200 MB on Business, 500 MB on Enterprise): " +
  "that problem's `alternatives` name the presigned PUT (POST /v1/uploads/sign) and tus (/api/upload/tus), which take files up to MAX_UPLOAD_BYTES without one large body";

const recordResponse = {
  201: { description: "The stored file", content: { "application/json": { schema: UploadRecordSchema } } },
  ...problemResponses,
  413: { description: `PAYLOAD_TOO_LARGE: a file over MAX_UPLOAD_BYTES, ${REQUEST_BODY_413}` },
};

/** The storage service: `{storage_url}/api/upload/*`. */
export const uploads = createApp();

uploads.openAPIRegistry.registerPath({
  method: "post",
  path: "/api/upload/file",
  tags: ["Storage"],
  summary: "Upload a file as multipart/form-data (part 'file')",
  security: bearerSecurity,
  request: { body: { required: true, content: { "multipart/form-data": { schema: { type: "object", properties: { file: { type: "string", format: "binary" } }, required: ["file"] } } } } },
  responses: recordResponse,
});

// Refused from Content-Length before a byte is read (and before a retry's body is fingerprinted).
// A file that fits no path is refused as such; one that fits but not in one request body is
// pointed to the paths that take it without one.
uploads.use("/api/upload/file", requireApiKey, async (c, next) => {
  const lengthHeader = c.req.header("content-length");
  const declared = lengthHeader === undefined ? Number.NaN : Number(lengthHeader);
  const { maxUploadBytes: limit, maxRequestBodyBytes } = config(c.env);
  if (Number.isFinite(declared) && declared > limit + REQUEST_ENVELOPE_BYTES) {
    throw new AppError("PAYLOAD_TOO_LARGE", `The request is ${declared} bytes; the file limit is ${limit} bytes.`, { limit });
  }
  if (Number.isFinite(declared) && declared > maxRequestBodyBytes) throw requestTooLarge(c.env, c.req.url, declared);
  await next();
});
// The file part is never buffered: its fingerprint is its bytes (with its name and type), hashed while stored.
uploads.use("/api/upload/file", idempotency({
  streamed: true,
  fingerprint: (c) => withFilePart(c.req.raw, (part) => fingerprintOfStream(part.body, filePartLabel(part))),
}));
uploads.post("/api/upload/file", async (c) => {
  // A body without Content-Length (chunked) is counted as it is read instead, where the request
  // limit is below the file limit's (otherwise the store's own file limit answers first).
  const { maxUploadBytes, maxRequestBodyBytes } = config(c.env);
  const counted = c.req.header("content-length") === undefined && maxRequestBodyBytes < maxUploadBytes + REQUEST_ENVELOPE_BYTES;
  const body = counted ? limitRequestBody(c.req.raw, maxRequestBodyBytes) : { request: c.req.raw, exceeded: () => false };
  const userId = c.get("userId");
  let record;
  try {
    record = await withFilePart(
      body.request,
      (part) => ingestUpload(c.env, userId, { body: fingerprintWhileReading(c, part.body, filePartLabel(part)), declaredType: part.declaredType, filename: part.filename }),
      (stored) => deleteFile(c.env, { key: stored.key, user_id: userId }),
    );
  } catch (error) {
    throw body.exceeded() ? requestTooLarge(c.env, c.req.url, undefined) : error;
  }
  return c.json(record, 201);
});

// Refused from Content-Length before a byte is read, or as soon as a chunked body passes the cap.
uploads.use("/api/upload/base64", requireApiKey, async (c, next) => {
  const settings = config(c.env);
  const fileLimit = base64FileLimit(settings);
  const limit = base64BodyLimit(settings);
  return bodyLimit({
    maxSize: limit,
    onError: () => {
      if (limit === fileLimit) throw new AppError("PAYLOAD_TOO_LARGE", `The decoded file would exceed the limit of ${settings.maxUploadBytes} bytes.`);
      if (limit === MAX_BASE64_BODY_BYTES) throw base64TooLarge();
      throw requestTooLarge(c.env, c.req.url, Number(c.req.header("content-length")) || undefined);
    },
  })(c, next);
}, idempotency());
uploads.openapi(
  createRoute({
    method: "post", path: "/api/upload/base64", tags: ["Storage"], summary: "Upload a file as a base64 data URI", security: bearerSecurity,
    request: { body: { required: true, content: { "application/json": { schema: Base64UploadSchema } } } },
    responses: { ...recordResponse, 413: { description: `PAYLOAD_TOO_LARGE: a file over MAX_UPLOAD_BYTES, ${REQUEST_BODY_413}; or BASE64_TOO_LARGE, a body over ${MAX_BASE64_BODY_BYTES} bytes, the cap that keeps one base64 upload within the Worker's 128 MB (send larger files as multipart, a signed PUT or tus)` } },
  }),
  async (c) => {
    const { data, filename } = c.req.valid("json");
    const parsed = parseDataUri(data);
    const record = await ingestUpload(c.env, c.get("userId"), { body: parsed.body, length: parsed.length, declaredType: parsed.contentType, filename });
    return c.json(record, 201);
  },
);

uploads.use("/api/upload/url", requireApiKey, idempotency());
uploads.openapi(
  createRoute({
    method: "post", path: "/api/upload/url", tags: ["Storage"], summary: "Store a file downloaded from a public http(s) URL", security: bearerSecurity,
    request: { body: { required: true, content: { "application/json": { schema: UrlUploadSchema } } } },
    responses: { ...recordResponse, 502: { description: "The remote server failed or answered non-2xx" }, 504: { description: "The remote server sent no headers, or no bytes, for 30 s (URL_TIMEOUT, UPLOAD_SOURCE_STALLED), or took more than 15 minutes in all" } },
  }),
  async (c) => {
    const { url } = c.req.valid("json");
    const idleTimeoutMs = config(c.env).urlUploadIdleTimeoutSeconds * 1000;
    const { response, url: finalUrl } = await guardedFetch(c.env, url, { timeoutMs: REMOTE_DOWNLOAD_TIMEOUT_MS, idleTimeoutMs });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new AppError("URL_REMOTE_STATUS", `${finalUrl.host} answered ${response.status}; only a 2xx answer can be stored.`, { remote_status: response.status });
    }
    const lengthHeader = response.headers.get("content-length");
    const length = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
    const record = await ingestUpload(c.env, c.get("userId"), {
      body: untilClientLeaves(response.body, c.req.raw.signal),
      length: response.headers.get("content-encoding") ? undefined : length,
      declaredType: response.headers.get("content-type") ?? undefined,
      filename: lastPathSegment(finalUrl),
      bodyError: (error) => remoteFailure(error, finalUrl.host),
    });
    return c.json(record, 201);
  },
);

/**
 * FFHub-compatible direct upload: the client PUTs the bytes to `upload_url`, so files larger
 * than one request body through Cloudflare (100 MB on most plans) still reach the 1 GB limit.
 */
export const signedUploads = createApp();

signedUploads.use("/v1/uploads/sign", requireApiKey, idempotency());
signedUploads.openapi(
  createRoute({
    method: "post", path: "/v1/uploads/sign", tags: ["Storage"], summary: "Get a short-lived URL to PUT a file to", security: bearerSecurity,
    request: { body: { required: true, content: { "application/json": { schema: SignUploadRequestSchema } } } },
    responses: {
      200: { description: "Where to PUT the file", content: { "application/json": { schema: SignUploadResponseSchema } } },
      ...problemResponses,
      413: { description: "PAYLOAD_TOO_LARGE: `size` over MAX_UPLOAD_BYTES; or, only where no R2 credentials are configured (locally), over MAX_REQUEST_BODY_BYTES, since upload_url is then the Worker itself" },
    },
  }),
  async (c) => {
    const { filename, size, content_type } = c.req.valid("json");
    const limit = config(c.env).maxUploadBytes;
    if (size > limit) throw new AppError("PAYLOAD_TOO_LARGE", `The file is ${size} bytes; the limit is ${limit} bytes.`, { limit });
    const contentType = essence(content_type);
    if (!contentType) throw new AppError("VALIDATION_FAILED", `'${content_type}' is not a media type.`);
    const userId = c.get("userId");
    const key = newUploadKey(userId, extensionFor(contentType, filename));
    const expiresAt = expiryFrom(new Date(), c.env);
    const presigned = await presignR2Put(c.env, { key, contentType, size, ttlSeconds: SIGNED_URL_TTL_SECONDS });
    // Without R2 credentials upload_url is the Worker itself, so the PUT is a request body like any other.
    if (!presigned && size > config(c.env).maxRequestBodyBytes) throw requestTooLarge(c.env, c.req.url, size, "The PUT to this deployment's own upload URL (no R2 credentials here)");
    if (presigned) {
      await insertFile(c.env.DB, {
        key, user_id: userId, kind: "upload", task_id: null, size, md5: null, content_type: contentType,
        original_name: sanitizeFilename(filename), created_at: new Date().toISOString(), expires_at: expiresAt,
      });
    }
    const token = presigned
      ? undefined
      : await signToken(c.env.SIGNING_SECRET, "upload", { k: key, u: userId, s: size, t: contentType, n: sanitizeFilename(filename) }, SIGNED_URL_TTL_SECONDS);
    const uploadUrl = presigned ?? `${new URL(c.req.url).origin}/api/upload/signed/${token}`;
    return c.json({ upload_url: uploadUrl, public_url: publicUrls(c.env, key).url, key, expires_at: expiresAt, content_type: contentType }, 200);
  },
);

// The local stand-in for a presigned R2 URL: the token is the authorisation.
signedUploads.put("/api/upload/signed/:token", async (c) => {
  const grant = await verifyToken<{ k: string; u: string; s: number; t: string; n: string | null }>(c.env.SIGNING_SECRET, "upload", c.req.param("token"));
  if (essence(c.req.header("content-type")) !== grant.t) {
    throw new AppError("CONTENT_TYPE_MISMATCH", `Content-Type must be ${grant.t}, as signed.`);
  }
  const length = Number(c.req.header("content-length"));
  if (!Number.isFinite(length) || length !== grant.s) {
    throw new AppError("SIZE_MISMATCH", `Content-Length must be ${grant.s}, as signed.`);
  }
  if (length > config(c.env).maxRequestBodyBytes) throw requestTooLarge(c.env, c.req.url, length);
  if (await c.env.FILES.head(grant.k)) throw new AppError("SIGNATURE_INVALID", "This signed URL has already been used.");
  const record = await ingestUpload(c.env, grant.u, { body: c.req.raw.body!, length, declaredType: grant.t, filename: grant.n ?? undefined, key: grant.k });
  return c.json(record, 201);
});

/**
 * A remote whose body breaks off or outlives the download deadline is at fault (502/504),
 * not the client (400). (A stalled body already fails as UPLOAD_SOURCE_STALLED.)
 */
function remoteFailure(error: unknown, host: string): AppError {
  if (error instanceof Error && error.name === "TimeoutError") {
    return new AppError("URL_TIMEOUT", `${host} did not finish sending the file within ${REMOTE_DOWNLOAD_TIMEOUT_MS / 60_000} minutes.`);
  }
  return new AppError("URL_UNREACHABLE", `The connection to ${host} broke during the download: ${error instanceof Error ? error.message : String(error)}.`);
}

/**
 * The origin's body while the client still waits for the answer: a client that disconnects
 * aborts `signal` (compatibility flag enable_request_signal), which stops the origin read and
 * fails the upload, so nothing is stored for nobody.
 */
function untilClientLeaves(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const passed = new TransformStream<Uint8Array, Uint8Array>();
  // Its failure (the client left, the origin broke) reaches the reader of `passed`, which handles it.
  body.pipeTo(passed.writable, { signal }).catch(() => {});
  return passed.readable;
}

/** What identifies a multipart file besides its bytes, for its idempotency fingerprint. */
function filePartLabel(part: FilePart): string {
  return JSON.stringify([part.filename ?? null, part.declaredType ?? null]);
}

/** The file name a URL ends in, if any; malformed percent-encoding gives none rather than a 500. */
function lastPathSegment(url: URL): string | undefined {
  try {
    return decodeURIComponent(url.pathname.split("/").pop() ?? "") || undefined;
  } catch {
    return undefined;
  }
}
