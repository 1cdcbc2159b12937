import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { SELF, createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import worker from "../../../edge/index";
import { presignR2Put } from "../../../edge/files/presign";
import { base64url } from "../../../shared/encoding";
import { signToken } from "../../../edge/lib/signed-token";
import { api, createUser, fakeMp4, md5Hex, pathOf, postJson } from "../helpers";
import { storedFor } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { HTML_PAGE } from "../files/origin";
import { S3_ACCESS_KEY_ID, S3_BUCKET, S3_SECRET_ACCESS_KEY } from "../files/s3";

const LIMIT = Number(env.MAX_UPLOAD_BYTES);

interface Grant {
  upload_url: string;
  public_url: string;
  key: string;
  expires_at: string;
  content_type: string;
}

async function sign(apiKey: string, request: { filename: string; size: number; content_type: string }): Promise<Grant> {
  const response = await postJson("/v1/uploads/sign", apiKey, request);
  expect(response.status).toBe(200);
  return response.json<Grant>();
}

/** PUTs to a signed URL the way a client holding only that URL would: no API key. */
function put(uploadUrl: string, body: BodyInit, contentType: string): Promise<Response> {
  return SELF.fetch(uploadUrl, { method: "PUT", headers: { "content-type": contentType }, body });
}

/** The token at the end of a signed upload URL, and the URL with another token in its place. */
function tokenOf(uploadUrl: string): string {
  return pathOf(uploadUrl).split("/").pop()!;
}
function withToken(uploadUrl: string, token: string): string {
  return uploadUrl.slice(0, uploadUrl.lastIndexOf("/") + 1) + token;
}

describe("POST /v1/uploads/sign and PUT upload_url", () => {
  it("stores the PUT bytes under the signed key, served byte for byte from public_url", async () => {
    const { key: apiKey, userId } = await createUser();
    const data = fakeMp4(200_000);
    const grant = await sign(apiKey, { filename: "clip.mp4", size: data.byteLength, content_type: "video/mp4" });
    expect(grant.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    expect(grant.public_url).toBe(`http://localhost:8787/${grant.key}`);
    expect(grant.upload_url).toMatch(/^http:\/\/localhost:8787\/api\/upload\/signed\/[\w-]+\.[\w-]+$/);

    const response = await put(grant.upload_url, data, "video/mp4");
    expect(response.status).toBe(201);
    const record = await response.json<{ key: string; md5: string; size: number; url: string; expires_at: string }>();
    expect(record).toMatchObject({ key: grant.key, url: grant.public_url, size: data.byteLength, md5: await md5Hex(data) });
    // The lifetime starts when the bytes arrive, which is after signing.
    expect(Date.parse(record.expires_at)).toBeGreaterThanOrEqual(Date.parse(grant.expires_at));
    const download = await api(pathOf(grant.public_url), undefined);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(data);
    expect(await storedFor(userId)).toEqual({ objects: [grant.key], rows: [grant.key] });
  });

  it("answers 400 CONTENT_TYPE_MISMATCH to a PUT with another Content-Type than signed", async () => {
    const { key: apiKey, userId } = await createUser();
    const grant = await sign(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    await expectProblem(await put(grant.upload_url, fakeMp4(1000), "video/webm"), 400, "CONTENT_TYPE_MISMATCH");
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it("answers 400 CONTENT_TYPE_MISMATCH when the signed video/mp4 is really HTML, storing nothing", async () => {
    const { key: apiKey, userId } = await createUser();
    const html = new TextEncoder().encode(HTML_PAGE);
    const grant = await sign(apiKey, { filename: "clip.mp4", size: html.byteLength, content_type: "video/mp4" });
    await expectProblem(await put(grant.upload_url, html, "video/mp4"), 400, "CONTENT_TYPE_MISMATCH");
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it.each([999, 1001])("answers 400 SIZE_MISMATCH to a PUT of %i bytes when 1000 were signed", async (size) => {
    const { key: apiKey, userId } = await createUser();
    const grant = await sign(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    await expectProblem(await put(grant.upload_url, fakeMp4(size), "video/mp4"), 400, "SIZE_MISMATCH");
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it("answers 403 SIGNATURE_EXPIRED to an expired upload URL", async () => {
    const { key: apiKey, userId } = await createUser();
    const grant = await sign(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const expired = await signToken(env.SIGNING_SECRET, "upload", { k: grant.key, u: userId, s: 1000, t: "video/mp4", n: "clip.mp4" }, -1);
    await expectProblem(await put(withToken(grant.upload_url, expired), fakeMp4(1000), "video/mp4"), 403, "SIGNATURE_EXPIRED");
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it("answers 403 SIGNATURE_INVALID to a token whose signature does not match", async () => {
    const { key: apiKey, userId } = await createUser();
    const grant = await sign(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const [payload, signature] = tokenOf(grant.upload_url).split(".");
    const flipped = `${signature!.slice(0, -2)}${signature!.endsWith("AA") ? "BB" : "AA"}`;
    await expectProblem(await put(withToken(grant.upload_url, `${payload}.${flipped}`), fakeMp4(1000), "video/mp4"), 403, "SIGNATURE_INVALID");
    await expectProblem(await put(withToken(grant.upload_url, "garbage"), fakeMp4(1000), "video/mp4"), 403, "SIGNATURE_INVALID");
    expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
  });

  it("answers 403 SIGNATURE_INVALID to a token whose payload was edited to another user's key", async () => {
    const alice = await createUser();
    const mallory = await createUser();
    const aliceGrant = await sign(alice.key, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const malloryGrant = await sign(mallory.key, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const [payload, signature] = tokenOf(malloryGrant.upload_url).split(".");
    const claims = JSON.parse(atob(payload!.replaceAll("-", "+").replaceAll("_", "/"))) as Record<string, unknown>;
    const forged = base64url(new TextEncoder().encode(JSON.stringify({ ...claims, k: aliceGrant.key, u: alice.userId })));
    await expectProblem(await put(withToken(malloryGrant.upload_url, `${forged}.${signature}`), fakeMp4(1000), "video/mp4"), 403, "SIGNATURE_INVALID");
    expect(await storedFor(alice.userId)).toEqual({ objects: [], rows: [] });
  });

  it("answers 403 SIGNATURE_INVALID to a validly signed token made for another purpose", async () => {
    const { key: apiKey, userId } = await createUser();
    const grant = await sign(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const other = await signToken(env.SIGNING_SECRET, "callback", { k: grant.key, u: userId, s: 1000, t: "video/mp4", n: null }, 600);
    await expectProblem(await put(withToken(grant.upload_url, other), fakeMp4(1000), "video/mp4"), 403, "SIGNATURE_INVALID");
  });

  it("refuses a second PUT to a used URL and keeps the first file", async () => {
    const { key: apiKey, userId } = await createUser();
    const first = fakeMp4(1000);
    const grant = await sign(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    expect((await put(grant.upload_url, first, "video/mp4")).status).toBe(201);
    const second = fakeMp4(1000).map((byte, i) => (i < 12 ? byte : byte ^ 0xff));
    await expectProblem(await put(grant.upload_url, second, "video/mp4"), 403, "SIGNATURE_INVALID");
    expect(new Uint8Array(await (await api(pathOf(grant.public_url), undefined)).arrayBuffer())).toEqual(first);
    expect(await storedFor(userId)).toEqual({ objects: [grant.key], rows: [grant.key] });
  });

  it("answers 413 when asked to sign more than the upload limit", async () => {
    const { key: apiKey } = await createUser();
    await expectProblem(await postJson("/v1/uploads/sign", apiKey, { filename: "big.mp4", size: LIMIT + 1, content_type: "video/mp4" }), 413, "PAYLOAD_TOO_LARGE");
  });

  it.each([
    ["a zero size", { filename: "a.mp4", size: 0, content_type: "video/mp4" }],
    ["a fractional size", { filename: "a.mp4", size: 1.5, content_type: "video/mp4" }],
    ["a content type that is not a media type", { filename: "a.mp4", size: 10, content_type: "mp4 please" }],
    ["a missing file name", { size: 10, content_type: "video/mp4" }],
  ])("answers 400 VALIDATION_FAILED to %s", async (_label, body) => {
    const { key: apiKey } = await createUser();
    await expectProblem(await postJson("/v1/uploads/sign", apiKey, body), 400, "VALIDATION_FAILED");
  });

  it("answers 401 to a signing request without an API key", async () => {
    await expectProblem(await postJson("/v1/uploads/sign", undefined, { filename: "a.mp4", size: 10, content_type: "video/mp4" }), 401, "UNAUTHORIZED");
  });
});

/** The Worker's env with R2 S3 credentials pointing at the local SigV4-verifying S3 server. */
function envWithR2(): Env {
  return {
    ...env, R2_ACCOUNT_ID: "local", R2_ACCESS_KEY_ID: S3_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY,
    R2_BUCKET_NAME: S3_BUCKET, R2_S3_ENDPOINT: `http://127.0.0.1:${inject("s3Port")}`,
  };
}

/** POST /v1/uploads/sign through the whole Worker, run with `envWithR2()`. */
async function signWithR2(apiKey: string, request: { filename: string; size: number; content_type: string }): Promise<Grant> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request("http://localhost:8787/v1/uploads/sign", {
    method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: JSON.stringify(request),
  }), envWithR2(), ctx);
  await waitOnExecutionContext(ctx);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json<Grant>();
}

/**
 * What the S3 server holds at `key`, read with a presigned GET. (The SDK's own response parsing
 * needs DOMParser, which workerd lacks; presigning needs none.)
 */
async function s3Object(key: string): Promise<{ bytes: Uint8Array; contentType: string | null } | undefined> {
  const client = new S3Client({
    region: "auto", endpoint: `http://127.0.0.1:${inject("s3Port")}`, forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY },
  });
  const response = await fetch(await getSignedUrl(client, new GetObjectCommand({ Bucket: S3_BUCKET, Key: key }), { expiresIn: 60 }));
  if (response.status === 404) {
    expect(await response.text()).toContain("<Code>NoSuchKey</Code>");
    return undefined;
  }
  expect(response.status).toBe(200);
  return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type") };
}

describe("POST /v1/uploads/sign with R2 S3 credentials (presigned PUT checked by a SigV4-verifying S3 server)", () => {
  it("signs Content-Length and Content-Type only, and records owner, size, type and expiry in D1", async () => {
    const { key: apiKey, userId } = await createUser();
    const grant = await signWithR2(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const url = new URL(grant.upload_url);
    expect(url.origin).toBe(`http://127.0.0.1:${inject("s3Port")}`);
    expect(url.pathname).toBe(`/${S3_BUCKET}/${grant.key}`);
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;content-type;host");
    expect(url.searchParams.get("X-Amz-Expires")).toBe("900");
    expect([...url.searchParams.keys()].filter((name) => /meta|checksum/i.test(name))).toEqual([]);
    const row = await env.DB.prepare("SELECT user_id, kind, size, content_type, original_name, expires_at FROM files WHERE key = ?").bind(grant.key).first();
    expect(row).toEqual({ user_id: userId, kind: "upload", size: 1000, content_type: "video/mp4", original_name: "clip.mp4", expires_at: grant.expires_at });
  });

  it("accepts a PUT with exactly the signed size and type: the S3 server stores the bytes", async () => {
    const { key: apiKey } = await createUser();
    const data = fakeMp4(50_000);
    const grant = await signWithR2(apiKey, { filename: "clip.mp4", size: data.byteLength, content_type: "video/mp4" });
    const response = await fetch(grant.upload_url, { method: "PUT", headers: { "content-type": "video/mp4" }, body: data });
    expect(response.status, await response.text()).toBe(200);
    const stored = await s3Object(grant.key);
    expect(stored?.contentType).toBe("video/mp4");
    expect(stored?.bytes).toEqual(data);
  });

  it.each([999, 1001])("refuses a PUT of %i bytes when 1000 were signed (SignatureDoesNotMatch), storing nothing", async (size) => {
    const { key: apiKey } = await createUser();
    const grant = await signWithR2(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const response = await fetch(grant.upload_url, { method: "PUT", headers: { "content-type": "video/mp4" }, body: fakeMp4(size) });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    expect(await s3Object(grant.key)).toBeUndefined();
  });

  it.each(["text/html", "video/webm"])("refuses a PUT declaring %s when video/mp4 was signed, storing nothing", async (type) => {
    const { key: apiKey } = await createUser();
    const grant = await signWithR2(apiKey, { filename: "clip.mp4", size: 1000, content_type: "video/mp4" });
    const response = await fetch(grant.upload_url, { method: "PUT", headers: { "content-type": type }, body: fakeMp4(1000) });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    expect(await s3Object(grant.key)).toBeUndefined();
  });

  it("refuses a PUT to an expired URL (AccessDenied), storing nothing", async () => {
    const key = `uploads/usr_expiry/${crypto.randomUUID().replaceAll("-", "")}.mp4`;
    const url = await presignR2Put(envWithR2(), { key, contentType: "video/mp4", size: 1000, ttlSeconds: 1 });
    // SigV4 expiry has a one-second resolution: wait until the URL is certainly past it.
    await scheduler.wait(2_100);
    const response = await fetch(url!, { method: "PUT", headers: { "content-type": "video/mp4" }, body: fakeMp4(1000) });
    expect(response.status).toBe(403);
    expect(await response.text()).toMatch(/<Code>AccessDenied<\/Code>[\s\S]*Request has expired/);
    expect(await s3Object(key)).toBeUndefined();
  });

  it("refuses a PUT whose signature was made with another secret", async () => {
    const key = `uploads/usr_forged/${crypto.randomUUID().replaceAll("-", "")}.mp4`;
    const url = await presignR2Put({ ...envWithR2(), R2_SECRET_ACCESS_KEY: "not-the-secret" }, { key, contentType: "video/mp4", size: 1000, ttlSeconds: 60 });
    const response = await fetch(url!, { method: "PUT", headers: { "content-type": "video/mp4" }, body: fakeMp4(1000) });
    expect(response.status).toBe(403);
    expect(await s3Object(key)).toBeUndefined();
  });
});
