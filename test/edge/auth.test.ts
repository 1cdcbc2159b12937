import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { generateApiKey } from "../../shared/api-keys";
import { api, createUser, fakeMp4, md5Hex, pathOf, postJson, uploadFile } from "./helpers";
import { storedFor } from "./files/fixtures";
import { expectProblem } from "../helpers/problems";

const PROTECTED: [string, string][] = [
  ["GET", "/v1/me"],
  ["POST", "/api/upload/file"],
  ["POST", "/api/upload/base64"],
  ["POST", "/api/upload/url"],
  ["POST", "/v1/uploads/sign"],
];

async function revokedKey(): Promise<string> {
  const { key, userId } = await createUser();
  await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE user_id = ?").bind(new Date().toISOString(), userId).run();
  return key;
}

function call(method: string, path: string, authorization: string | undefined, query = ""): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== undefined) headers.authorization = authorization;
  return SELF.fetch(`http://localhost:8787${path}${query}`, { method, headers, body: method === "GET" ? undefined : "{}" });
}

describe("API key authentication", () => {
  it.each(PROTECTED)("answers %s %s with one identical 401 body for missing, malformed, unknown and revoked keys", async (method, path) => {
    const revoked = await revokedKey();
    const unknown = generateApiKey().key;
    const cases: (string | undefined)[] = [undefined, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", `Bearer ${unknown.slice(0, -1)}`, `Bearer ${unknown}!`, `Token ${unknown}`, `Bearer ${unknown}`, `Bearer ${revoked}`];
    const bodies = new Set<string>();
    for (const authorization of cases) {
      const response = await call(method, path, authorization);
      expect(response.status, String(authorization)).toBe(401);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      bodies.add(await response.text());
    }
    expect(bodies.size).toBe(1);
    expect(JSON.parse([...bodies][0]!)).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
  });

  it.each(["api_key", "key", "token", "access_token", "authorization"])("ignores a valid key sent as ?%s= in the query string", async (name) => {
    const { key } = await createUser();
    await expectProblem(await call("GET", "/v1/me", undefined, `?${name}=${encodeURIComponent(key)}`), 401, "UNAUTHORIZED");
  });

  it("accepts the Bearer scheme name in any case", async () => {
    const { key } = await createUser();
    expect((await call("GET", "/v1/me", `bearer ${key}`)).status).toBe(200);
    expect((await call("GET", "/v1/me", `BEARER ${key}`)).status).toBe(200);
  });

  it("stops accepting a key as soon as it is revoked", async () => {
    const { key, userId } = await createUser();
    expect((await api("/v1/me", key)).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE user_id = ?").bind(new Date().toISOString(), userId).run();
    await expectProblem(await api("/v1/me", key), 401, "UNAUTHORIZED");
  });

  it("stores only a SHA-256 of the key and a short display prefix", async () => {
    const { key, userId } = await createUser();
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE user_id = ?").bind(userId).first<Record<string, unknown>>();
    const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
    expect(row?.hash).toBe([...new Uint8Array(hash)].map((byte) => byte.toString(16).padStart(2, "0")).join(""));
    expect(row?.prefix).toBe(key.slice(0, 12));
    expect(Object.values(row ?? {})).not.toContain(key);
  });
});

describe("storage isolation between users", () => {
  it("keys every upload under the uploader's own user id", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const record = await (await uploadFile(bob.key, fakeMp4(2048))).json<{ key: string }>();
    expect(record.key.startsWith(`uploads/${bob.userId}/`)).toBe(true);
    expect(record.key).not.toContain(alice.userId);
    const row = await env.DB.prepare("SELECT user_id FROM files WHERE key = ?").bind(record.key).first<{ user_id: string }>();
    expect(row?.user_id).toBe(bob.userId);
  });

  it("gives two users who upload the same bytes independent objects", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const data = fakeMp4(10_000);
    const aliceRecord = await (await uploadFile(alice.key, data)).json<{ key: string; url: string; md5: string }>();
    const bobRecord = await (await uploadFile(bob.key, data)).json<{ key: string; url: string; md5: string }>();
    expect(aliceRecord.md5).toBe(await md5Hex(data));
    expect(bobRecord.md5).toBe(aliceRecord.md5);
    expect(bobRecord.key).not.toBe(aliceRecord.key);
    expect(pathOf(bobRecord.url)).not.toBe(pathOf(aliceRecord.url));
    // Removing Alice's copy leaves Bob's untouched: nothing is shared or deduplicated.
    await env.FILES.delete(aliceRecord.key);
    expect((await api(pathOf(aliceRecord.url), undefined)).status).toBe(404);
    expect(new Uint8Array(await (await api(pathOf(bobRecord.url), undefined)).arrayBuffer())).toEqual(data);
  });

  it("binds a signed upload URL to the user who asked for it", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const grant = await (await postJson("/v1/uploads/sign", alice.key, { filename: "a.mp4", size: 1000, content_type: "video/mp4" })).json<{ upload_url: string; key: string }>();
    expect(grant.key.startsWith(`uploads/${alice.userId}/`)).toBe(true);
    // Whoever holds the URL, the file lands in Alice's space and belongs to Alice.
    const response = await SELF.fetch(grant.upload_url, { method: "PUT", headers: { "content-type": "video/mp4", authorization: `Bearer ${bob.key}` }, body: fakeMp4(1000) });
    expect(response.status).toBe(201);
    expect(await storedFor(bob.userId)).toEqual({ objects: [], rows: [] });
    expect(await storedFor(alice.userId)).toEqual({ objects: [grant.key], rows: [grant.key] });
  });

  it("offers no way to list files: neither a listing route nor a CDN prefix listing", async () => {
    const alice = await createUser();
    const bob = await createUser();
    await uploadFile(alice.key, fakeMp4(2048));
    await expectProblem(await api("/v1/uploads", bob.key), 404, "NOT_FOUND");
    await expectProblem(await api("/v1/files", bob.key), 404, "NOT_FOUND");
    await expectProblem(await api(`/uploads/${alice.userId}/`, bob.key), 404, "NOT_FOUND");
    await expectProblem(await api(`/uploads/${alice.userId}`, bob.key), 404, "NOT_FOUND");
    await expectProblem(await api("/api/upload/file", bob.key), 405, "METHOD_NOT_ALLOWED");
  });
});
