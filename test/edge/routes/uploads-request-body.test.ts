import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import worker from "../../../edge/index";
import type { UploadRecord } from "../../../shared/schemas/files";
import { createUser, fakeMp4, multipart } from "../helpers";
import { storedFor, streamedMultipart } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { S3_ACCESS_KEY_ID, S3_BUCKET, S3_SECRET_ACCESS_KEY } from "../files/s3";

// MAX_REQUEST_BODY_BYTES below the file limit (160 MiB in the test config), as production sets
// it to the Cloudflare plan's body limit below a 1 GB MAX_UPLOAD_BYTES.
const MiB = 1024 * 1024;
const BODY_LIMIT = 2 * MiB;
const ORIGIN = "http://localhost:8787";

function limitedEnv(overrides: Partial<Env> = {}): Env {
  return { ...env, MAX_REQUEST_BODY_BYTES: String(BODY_LIMIT), ...overrides } as Env;
}

/** With R2's S3 credentials (the local SigV4 server): presigned PUTs exist here. */
function limitedEnvWithR2(): Env {
  return limitedEnv({
    R2_ACCOUNT_ID: "local", R2_ACCESS_KEY_ID: S3_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY,
    R2_BUCKET_NAME: S3_BUCKET, R2_S3_ENDPOINT: `http://127.0.0.1:${inject("s3Port")}`,
  });
}

async function call(path: string, apiKey: string, init: RequestInit, workerEnv: Env): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${apiKey}`);
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`${ORIGIN}${path}`, { ...init, headers }), workerEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

// A Request built in the test carries only the headers it is given: Content-Length is set as a client sends it.
function multipartUpload(apiKey: string, data: Uint8Array, workerEnv: Env): Promise<Response> {
  const form = multipart([{ name: "file", filename: "clip.mp4", type: "video/mp4", data }]);
  return call("/api/upload/file", apiKey, { method: "POST", headers: { "content-type": form.contentType, "content-length": String(form.body.byteLength) }, body: form.body }, workerEnv);
}

function base64Body(data: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return JSON.stringify({ data: `data:video/mp4;base64,${btoa(binary)}` });
}

/** A request body that declares `declared` bytes but only ever sends a few. */
function declaredBody(declared: number): { body: ReadableStream<Uint8Array>; close: () => Promise<void> } {
  const { readable, writable } = new FixedLengthStream(declared);
  const writer = writable.getWriter();
  writer.write(fakeMp4(1024)).catch(() => {});
  return { body: readable, close: () => writer.abort().catch(() => {}) };
}

/** The 413 that points a file within MAX_UPLOAD_BYTES to the paths that carry no large body. */
async function expectRequestTooLarge(response: Response, alternatives: Record<string, string>): Promise<Record<string, unknown>> {
  const problem = await expectProblem(response, 413, "REQUEST_TOO_LARGE");
  expect(problem).toMatchObject({ limit: BODY_LIMIT, max_upload_bytes: Number(env.MAX_UPLOAD_BYTES), alternatives });
  expect(problem.alternatives).toEqual(alternatives);
  for (const url of Object.values(alternatives)) expect(problem.detail).toContain(url);
  return problem;
}

const TUS_ONLY = { tus: `${ORIGIN}/api/upload/tus` };
const BOTH = { presigned_put: `${ORIGIN}/v1/uploads/sign`, tus: `${ORIGIN}/api/upload/tus` };

describe("MAX_REQUEST_BODY_BYTES: uploads whose body exceeds the platform's request limit", () => {
  it("answers a multipart body declared over the limit with 413 naming the presigned PUT and tus, before reading it", async () => {
    const { key, userId } = await createUser();
    const declared = declaredBody(BODY_LIMIT + 1);
    const response = await call("/api/upload/file", key, { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x", "content-length": String(BODY_LIMIT + 1) }, body: declared.body }, limitedEnvWithR2());
    const problem = await expectRequestTooLarge(response, BOTH);
    expect(problem.detail).toContain(`${BODY_LIMIT + 1} bytes`);
    await declared.close();
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it("names only tus where no R2 credentials make presigned PUTs bypass the Worker", async () => {
    const { key } = await createUser();
    const problem = await expectRequestTooLarge(await multipartUpload(key, fakeMp4(BODY_LIMIT), limitedEnv()), TUS_ONLY);
    expect(problem.detail).toMatch(/^The request body is \d+ bytes/);
  });

  it("stops a chunked multipart body at the limit, stores nothing and answers the same 413", async () => {
    const { key, userId } = await createUser();
    const size = 8 * BODY_LIMIT;
    const upload = streamedMultipart(size);
    const response = await call("/api/upload/file", key, { method: "POST", headers: { "content-type": upload.contentType }, body: upload.body }, limitedEnv());
    const problem = await expectRequestTooLarge(response, TUS_ONLY);
    expect(problem.detail).toContain(`passed ${BODY_LIMIT} bytes`);
    expect(upload.pulled()).toBeLessThan(size);
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it("still stores a multipart upload whose body is under the limit", async () => {
    const { key } = await createUser();
    const response = await multipartUpload(key, fakeMp4(BODY_LIMIT - 64 * 1024), limitedEnv());
    expect(response.status).toBe(201);
    expect((await response.json<UploadRecord>()).size).toBe(BODY_LIMIT - 64 * 1024);
  });

  it("still stores a chunked multipart upload under the limit", async () => {
    const { key } = await createUser();
    const upload = streamedMultipart(BODY_LIMIT - 64 * 1024);
    const response = await call("/api/upload/file", key, { method: "POST", headers: { "content-type": upload.contentType }, body: upload.body }, limitedEnv());
    expect(response.status).toBe(201);
    expect(await response.json<UploadRecord>()).toMatchObject({ size: BODY_LIMIT - 64 * 1024, md5: await upload.md5 });
  });

  it("answers a base64 body over the limit (below the base64 memory cap) with the same 413, and stores one under it", async () => {
    const { key, userId } = await createUser();
    const over = base64Body(fakeMp4(BODY_LIMIT));
    expect(over.length).toBeGreaterThan(BODY_LIMIT);
    const json = { "content-type": "application/json" };
    await expectRequestTooLarge(await call("/api/upload/base64", key, { method: "POST", headers: { ...json, "content-length": String(over.length) }, body: over }, limitedEnvWithR2()), BOTH);
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
    const under = base64Body(fakeMp4(BODY_LIMIT / 2));
    const response = await call("/api/upload/base64", key, { method: "POST", headers: json, body: under }, limitedEnvWithR2());
    expect(response.status).toBe(201);
    expect((await response.json<UploadRecord>()).size).toBe(BODY_LIMIT / 2);
  });

  it("answers a raw PUT to the Worker's own signed upload URL over the limit with 413 naming tus", async () => {
    const { key, userId } = await createUser();
    // Signed where the limit is higher, then sent where it is lower (a lowered setting, or a URL made elsewhere).
    const signed = await call("/v1/uploads/sign", key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ filename: "clip.mp4", size: BODY_LIMIT + 1, content_type: "video/mp4" }) }, env);
    expect(signed.status).toBe(200);
    const { upload_url } = await signed.json<{ upload_url: string }>();
    const declared = declaredBody(BODY_LIMIT + 1);
    const ctx = createExecutionContext();
    const response = await worker.fetch(new Request(upload_url, { method: "PUT", headers: { "content-type": "video/mp4", "content-length": String(BODY_LIMIT + 1) }, body: declared.body }), limitedEnv(), ctx);
    await waitOnExecutionContext(ctx);
    await expectRequestTooLarge(response, TUS_ONLY);
    await declared.close();
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it("refuses to sign a Worker-served upload URL for a file over the limit, naming tus", async () => {
    const { key } = await createUser();
    const response = await call("/v1/uploads/sign", key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ filename: "clip.mp4", size: BODY_LIMIT + 1, content_type: "video/mp4" }) }, limitedEnv());
    await expectRequestTooLarge(response, TUS_ONLY);
  });

  it("still signs a presigned R2 PUT for a file over the limit: its bytes never reach the Worker", async () => {
    const { key } = await createUser();
    const response = await call("/v1/uploads/sign", key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ filename: "clip.mp4", size: 50 * BODY_LIMIT, content_type: "video/mp4" }) }, limitedEnvWithR2());
    expect(response.status).toBe(200);
    expect((await response.json<{ upload_url: string }>()).upload_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
  });

  it("answers a tus PATCH chunk over the limit with 413 REQUEST_TOO_LARGE naming the largest chunk, and takes a chunk under it", async () => {
    const { key } = await createUser();
    const size = 3 * MiB;
    const created = await call("/api/upload/tus", key, { method: "POST", headers: { "tus-resumable": "1.0.0", "upload-length": String(size), "upload-metadata": `filename ${btoa("clip.mp4")}` } }, limitedEnv());
    expect(created.status, await created.clone().text()).toBe(201);
    const location = new URL(created.headers.get("location")!, ORIGIN).pathname;
    const patch = (data: Uint8Array, offset: number) => call(location, key, { method: "PATCH", headers: { "tus-resumable": "1.0.0", "upload-offset": String(offset), "content-type": "application/offset+octet-stream", "content-length": String(data.byteLength) }, body: data }, limitedEnv());
    const tooLarge = await patch(fakeMp4(size), 0);
    const problem = await expectProblem(tooLarge, 413, "REQUEST_TOO_LARGE");
    expect(problem).toMatchObject({ limit: BODY_LIMIT });
    const small = await patch(fakeMp4(MiB), 0);
    expect(small.status, await small.clone().text()).toBe(204);
    expect(small.headers.get("upload-offset")).toBe(String(MiB));
  });

  it("keeps a file over MAX_UPLOAD_BYTES a plain 413 without alternatives: no path takes it", async () => {
    const { key } = await createUser();
    const size = Number(env.MAX_UPLOAD_BYTES) + 1024 * 1024;
    const declared = declaredBody(size);
    const response = await call("/api/upload/file", key, { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x", "content-length": String(size) }, body: declared.body }, limitedEnvWithR2());
    const problem = await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
    expect(problem.alternatives).toBeUndefined();
    await declared.close();
  });
});
