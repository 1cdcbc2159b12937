import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import { randomHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import { UploadRecordSchema } from "../../shared/schemas/files";
import { essence } from "../files/content-type";
import { LOCK_LEASE_MS, LockLost, appendToUpload } from "../files/tus/append";
import {
  OFFSET_OCTET_STREAM, TUS_EXTENSIONS, TUS_REQUEST_HEADERS, TUS_RESPONSE_HEADERS, TUS_VERSION, parseByteCount, parseMetadata,
} from "../files/tus/protocol";
import { acquireLock, findUpload, releaseLock } from "../files/tus/repository";
import { completedRecord, createUpload, liveUpload, terminateUpload } from "../files/tus/uploads";
import { requireApiKey } from "../accounts/credentials";
import { config } from "../lib/config";
import { idempotency } from "../lib/idempotency";
import { type AppEnv, bearerSecurity, createApp, problemResponses } from "../lib/openapi";

const COLLECTION = "/api/upload/tus";
const RESOURCE = "/api/upload/tus/:id";

/**
 * Resumable uploads, tus 1.0 (core, creation, termination, expiration) on R2 multipart
 * uploads, so tus-js-client and Uppy work unchanged: https://tus.io/protocols/resumable-upload
 * For files over one request body through Cloudflare (100 MB on most plans) or flaky links.
 */
export const tus = createApp();

/** Every response says `Tus-Resumable`; every request but OPTIONS (and a plain GET) must speak 1.0.0. */
const tusProtocol = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === "OPTIONS") {
    // Discovery; the CORS middleware after this one answers the OPTIONS request with these headers.
    c.res.headers.set("Tus-Version", TUS_VERSION);
    c.res.headers.set("Tus-Extension", TUS_EXTENSIONS);
    c.res.headers.set("Tus-Max-Size", String(config(c.env).maxUploadBytes));
  } else if (c.req.method !== "GET" && c.req.header("tus-resumable") !== TUS_VERSION) {
    throw new AppError("TUS_VERSION_UNSUPPORTED", `Send 'Tus-Resumable: ${TUS_VERSION}'; it is the only tus version served.`)
      .withHeaders({ "Tus-Version": TUS_VERSION, "Tus-Resumable": TUS_VERSION });
  }
  await next();
  c.res.headers.set("Tus-Resumable", TUS_VERSION);
});

// Browser clients (Uppy) upload cross-origin with a bearer key, never cookies: any origin may.
const tusCors = cors({ origin: "*", allowMethods: ["POST", "GET", "HEAD", "PATCH", "DELETE", "OPTIONS"], allowHeaders: TUS_REQUEST_HEADERS, exposeHeaders: TUS_RESPONSE_HEADERS, maxAge: 86_400 });

// Hono's `/x/*` also matches `/x` itself: one registration covers the collection and each upload.
tus.use(`${COLLECTION}/*`, tusProtocol, tusCors, requireApiKey);
// The "request" of a creation is its headers: the same length and metadata make the same upload.
tus.use(COLLECTION, idempotency({ fingerprint: async (c) => JSON.stringify([c.req.header("upload-length") ?? null, c.req.header("upload-metadata") ?? null]) }));

tus.post(COLLECTION, async (c) => {
  if (c.req.header("upload-defer-length") !== undefined) {
    throw new AppError("VALIDATION_FAILED", "Upload-Defer-Length is not supported (no creation-defer-length extension); send Upload-Length.");
  }
  const length = parseByteCount("Upload-Length", c.req.header("upload-length"));
  const upload = await createUpload(c.env, c.get("userId"), length, parseMetadata(c.req.header("upload-metadata")));
  return c.body(null, 201, { Location: `${new URL(c.req.url).origin}${COLLECTION}/${upload.id}`, "Upload-Expires": httpDate(upload.expires_at) });
});

// Hono answers HEAD with this GET route, minus the body.
tus.get(RESOURCE, async (c) => {
  const upload = await liveUpload(c.env, c.get("userId"), c.req.param("id"));
  const completed = upload.state === "completed";
  const headers: Record<string, string> = {
    "Upload-Offset": String(completed ? upload.upload_length : upload.upload_offset),
    "Upload-Length": String(upload.upload_length),
    "Upload-Expires": httpDate(upload.expires_at),
    "Cache-Control": "no-store",
  };
  if (upload.metadata) headers["Upload-Metadata"] = upload.metadata;
  // A client whose last PATCH response was lost learns the result here.
  if (completed) headers["Upload-Record"] = JSON.stringify(await completedRecord(c.env, upload));
  return c.body(null, 200, headers);
});

const patchUpload = async (c: Context<AppEnv>) => {
  if (essence(c.req.header("content-type")) !== OFFSET_OCTET_STREAM) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", `A PATCH body must be sent as Content-Type: ${OFFSET_OCTET_STREAM}.`);
  }
  const offset = parseByteCount("Upload-Offset", c.req.header("upload-offset"));
  // A chunk over the platform's request body limit: where the Worker sees one at all, say how large a chunk may be.
  const chunk = Number(c.req.header("content-length"));
  const maxChunk = config(c.env).maxRequestBodyBytes;
  if (Number.isFinite(chunk) && chunk > maxChunk) {
    throw new AppError("REQUEST_TOO_LARGE", `The PATCH body is ${chunk} bytes; this deployment takes request bodies of at most ${maxChunk} bytes: send chunks of at most that size (tus-js-client: chunkSize).`, { limit: maxChunk });
  }
  const id = c.req.param("id") ?? "";
  const token = randomHex(16);
  const upload = await acquireLock(c.env.DB, c.get("userId"), id, offset, token, LOCK_LEASE_MS);
  if (!upload) return finishedOrRefused(c, id, offset);
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && offset + declared > upload.upload_length) {
    await releaseLock(c.env.DB, id, token);
    throw new AppError("PAYLOAD_TOO_LARGE", `The body would end at byte ${offset + declared}, past Upload-Length ${upload.upload_length}.`);
  }
  // A lock not released lapses with its lease; the append's own outcome is what counts.
  const work = appendToUpload(c.env, upload, token, c.req.raw.body).finally(() => releaseLock(c.env.DB, id, token).catch(() => {}));
  // A client that disconnects cancels this request, but what it sent must still be saved:
  // waitUntil keeps the work alive (up to 30 s after the disconnect, ample for one part).
  // https://developers.cloudflare.com/workers/runtime-apis/context/#waituntil
  // Its failure is handled where it is awaited, below.
  c.executionCtx.waitUntil(work.catch(() => {}));
  let result: Awaited<typeof work>;
  try {
    result = await work;
  } catch (error) {
    if (error instanceof LockLost) throw await lockLostError(c, id);
    throw error;
  }
  const headers: Record<string, string> = { "Upload-Offset": String(result.offset), "Upload-Expires": httpDate(upload.expires_at) };
  if (result.record) headers["Upload-Record"] = JSON.stringify(result.record);
  return c.body(null, 204, headers);
};

const deleteUpload = async (c: Context<AppEnv>) => {
  await terminateUpload(c.env, await liveUpload(c.env, c.get("userId"), c.req.param("id") ?? ""));
  return c.body(null, 204);
};

tus.patch(RESOURCE, patchUpload);
tus.delete(RESOURCE, deleteUpload);
// tus core: X-HTTP-Method-Override lets clients behind proxies that drop PATCH/DELETE send a POST.
tus.post(RESOURCE, (c) => {
  const method = c.req.header("x-http-method-override")?.toUpperCase();
  if (method === "PATCH") return patchUpload(c);
  if (method === "DELETE") return deleteUpload(c);
  throw new AppError("METHOD_NOT_ALLOWED", "POST to an upload needs X-HTTP-Method-Override: PATCH or DELETE.").withHeaders({ Allow: "GET, HEAD, PATCH, DELETE" });
});

const UploadIdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, example: "upl_3f0c9a1d2b4e5f60718293a4b5c6d7e8" }) });

tus.openapi(
  createRoute({
    method: "get", path: "/api/upload/tus/{id}/record", tags: ["Storage"], summary: "The stored file of a completed resumable upload", security: bearerSecurity,
    request: { params: UploadIdParam },
    responses: {
      200: { description: "The upload record, as every upload endpoint answers", content: { "application/json": { schema: UploadRecordSchema } } },
      ...problemResponses,
      404: { description: "No such upload for this key" },
      409: { description: "The upload has not received all its bytes yet" },
      410: { description: "The upload was terminated or has expired, or its file was deleted" },
    },
  }),
  async (c) => {
    const upload = await liveUpload(c.env, c.get("userId"), c.req.valid("param").id);
    if (upload.state !== "completed") {
      throw new AppError("UPLOAD_INCOMPLETE", `The upload has ${upload.upload_offset} of ${upload.upload_length} bytes.`, { upload_offset: upload.upload_offset, upload_length: upload.upload_length });
    }
    return c.json(await completedRecord(c.env, upload), 200);
  },
);

/** Why a PATCH could not take the upload: finished already, gone, at another offset, or held by another PATCH. */
async function finishedOrRefused(c: Context<AppEnv>, id: string, offset: number): Promise<Response> {
  const upload = await liveUpload(c.env, c.get("userId"), id);
  if (upload.state === "completed" && offset === upload.upload_length) {
    return c.body(null, 204, { "Upload-Offset": String(upload.upload_length), "Upload-Record": JSON.stringify(await completedRecord(c.env, upload)) });
  }
  const current = upload.state === "completed" ? upload.upload_length : upload.upload_offset;
  if (offset !== current) {
    throw new AppError("UPLOAD_OFFSET_MISMATCH", `Upload-Offset is ${offset} but the upload has ${current} bytes; HEAD it and continue from there.`, { upload_offset: current })
      .withHeaders({ "Upload-Offset": String(current) });
  }
  throw locked();
}

async function lockLostError(c: Context<AppEnv>, id: string): Promise<AppError> {
  const upload = await findUpload(c.env.DB, c.get("userId"), id);
  if (!upload || upload.state === "terminated" || Date.parse(upload.expires_at) <= Date.now()) {
    return new AppError("UPLOAD_GONE", `Upload '${id}' was terminated or expired while this PATCH ran.`);
  }
  return locked();
}

function locked(): AppError {
  return new AppError("UPLOAD_LOCKED", "Another PATCH to this upload is in progress; HEAD it and continue once it has finished.").withHeaders({ "Retry-After": "1" });
}

function httpDate(iso: string): string {
  return new Date(iso).toUTCString();
}

/** The tus protocol in the OpenAPI document: header-driven, so described rather than validated by zod. */
const tusHeaders = { "Tus-Resumable": { schema: { type: "string" as const, example: TUS_VERSION } } };
tus.openAPIRegistry.registerPath({
  method: "post", path: COLLECTION, tags: ["Storage"], security: bearerSecurity,
  summary: "Create a resumable (tus 1.0) upload",
  description: "Headers `Tus-Resumable: 1.0.0`, `Upload-Length` (bytes, at most Tus-Max-Size) and optionally `Upload-Metadata` (`filename`, `filetype`, base64). Answers 201 with `Location`. Supports `Idempotency-Key`. See docs/uploads.md.",
  responses: { 201: { description: "Created; PATCH the bytes to Location", headers: { Location: { schema: { type: "string" } }, ...tusHeaders } }, ...problemResponses, 412: { description: "Unsupported Tus-Resumable" }, 413: { description: "Upload-Length over the limit" } },
});
tus.openAPIRegistry.registerPath({
  method: "head", path: "/api/upload/tus/{id}", tags: ["Storage"], security: bearerSecurity, request: { params: UploadIdParam },
  summary: "How many bytes of a resumable upload are stored",
  responses: { 200: { description: "`Upload-Offset`, `Upload-Length`; `Upload-Record` once complete", headers: { "Upload-Offset": { schema: { type: "integer" } }, ...tusHeaders } }, 404: { description: "No such upload for this key" }, 410: { description: "Terminated or expired" } },
});
tus.openAPIRegistry.registerPath({
  method: "patch", path: "/api/upload/tus/{id}", tags: ["Storage"], security: bearerSecurity, request: { params: UploadIdParam, body: { content: { [OFFSET_OCTET_STREAM]: { schema: { type: "string", format: "binary" } } } } },
  summary: "Append bytes at Upload-Offset",
  responses: {
    204: { description: "Stored; `Upload-Offset` is the new offset, `Upload-Record` (JSON) is set when this PATCH completed the upload", headers: { "Upload-Offset": { schema: { type: "integer" } }, ...tusHeaders } },
    ...problemResponses, 404: { description: "No such upload for this key" }, 409: { description: "Upload-Offset is not the stored offset, or another PATCH holds the upload" },
    410: { description: "Terminated or expired" }, 413: { description: "Past Upload-Length" }, 415: { description: `Content-Type is not ${OFFSET_OCTET_STREAM}` },
  },
});
tus.openAPIRegistry.registerPath({
  method: "delete", path: "/api/upload/tus/{id}", tags: ["Storage"], security: bearerSecurity, request: { params: UploadIdParam },
  summary: "Terminate a resumable upload (and delete its file if it had completed)",
  responses: { 204: { description: "Terminated" }, 404: { description: "No such upload for this key" }, 410: { description: "Already terminated or expired" } },
});
tus.openAPIRegistry.registerPath({
  method: "options", path: COLLECTION, tags: ["Storage"], summary: "tus discovery: Tus-Version, Tus-Extension, Tus-Max-Size",
  responses: { 204: { description: "Server capabilities" } },
});
