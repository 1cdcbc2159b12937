import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, pathOf, uploadFile } from "../helpers";
import { FileListSchema } from "../../../shared/schemas/files";
import { seedFile } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";

const HOUR = 3_600_000;

async function upload(key: string): Promise<{ key: string; url: string }> {
  const response = await uploadFile(key, "some subtitles", "text/plain", "subs.txt");
  expect(response.status).toBe(201);
  return response.json();
}

async function stored(key: string): Promise<{ object: boolean; row: boolean }> {
  const row = await env.DB.prepare("SELECT 1 AS one FROM files WHERE key = ?").bind(key).first();
  return { object: (await env.FILES.head(key)) !== null, row: row !== null };
}

describe("DELETE /api/files/{key}", () => {
  it("deletes the caller's file named by its URL-encoded key; the CDN then answers 404", async () => {
    const { key } = await createUser();
    const file = await upload(key);
    expect((await api(pathOf(file.url), undefined)).status).toBe(200);
    const response = await api(`/api/files/${encodeURIComponent(file.key)}`, key, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(await stored(file.key)).toEqual({ object: false, row: false });
    expect((await api(pathOf(file.url), undefined)).status).toBe(404);
  });

  it("accepts the key as a plain path", async () => {
    const { key } = await createUser();
    const file = await upload(key);
    expect((await api(`/api/files/${file.key}`, key, { method: "DELETE" })).status).toBe(204);
    expect(await stored(file.key)).toEqual({ object: false, row: false });
  });

  it("answers 404, not 403, for another user's file and leaves it in place", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const file = await upload(owner.key);
    await expectProblem(await api(`/api/files/${encodeURIComponent(file.key)}`, stranger.key, { method: "DELETE" }), 404, "NOT_FOUND");
    expect(await stored(file.key)).toEqual({ object: true, row: true });
    expect((await api(pathOf(file.url), undefined)).status).toBe(200);
  });

  it("answers 404 for an unknown key, a malformed encoding and a second delete", async () => {
    const { key, userId } = await createUser();
    const seeded = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR) });
    expect((await api(`/api/files/${seeded}`, key, { method: "DELETE" })).status).toBe(204);
    await expectProblem(await api(`/api/files/${seeded}`, key, { method: "DELETE" }), 404, "NOT_FOUND");
    await expectProblem(await api(`/api/files/uploads/${userId}/missing.mp4`, key, { method: "DELETE" }), 404, "NOT_FOUND");
    await expectProblem(await api("/api/files/%E0%A4%A", key, { method: "DELETE" }), 404, "NOT_FOUND");
  });

  it("deletes a task output the caller owns", async () => {
    const { key, userId } = await createUser();
    const outputKey = `outputs/${userId}/tsk_000000000000000000000000/out.mp4`;
    await env.FILES.put(outputKey, "video", { customMetadata: { user_id: userId, expires_at: new Date(Date.now() + HOUR).toISOString() } });
    await env.DB.prepare(
      "INSERT INTO files (key, user_id, kind, task_id, size, md5, content_type, original_name, created_at, expires_at) VALUES (?, ?, 'output', NULL, 5, NULL, 'video/mp4', 'out.mp4', ?, ?)",
    ).bind(outputKey, userId, new Date().toISOString(), new Date(Date.now() + HOUR).toISOString()).run();
    expect((await api(`/api/files/${encodeURIComponent(outputKey)}`, key, { method: "DELETE" })).status).toBe(204);
    expect(await stored(outputKey)).toEqual({ object: false, row: false });
  });

  it("answers 401 without an API key", async () => {
    await expectProblem(await api("/api/files/uploads%2Fx%2Fy.txt", undefined, { method: "DELETE" }), 401, "UNAUTHORIZED");
  });
});

describe("GET /api/files", () => {
  interface Listing {
    total: number;
    files: { key: string; url: string; cn_url: string; md5: string; size: number; content_type: string; expires_at: string; filename: string | null; created_at: string }[];
  }

  async function list(apiKey: string, query = ""): Promise<Listing> {
    const response = await api(`/api/files${query}`, apiKey);
    expect(response.status).toBe(200);
    const body = await response.json<Listing>();
    expect(FileListSchema.safeParse(body).success).toBe(true);
    return body;
  }

  it("lists the caller's unexpired files, newest first, with their record, name and creation time", async () => {
    const { key, userId } = await createUser();
    const first = await upload(key);
    const second = await (await uploadFile(key, "other words", "text/plain", "notes.txt")).json<{ key: string; md5: string; url: string }>();
    await seedFile(userId, { expiresAt: new Date(Date.now() - 1000) });
    const other = await createUser();
    await upload(other.key);

    const listing = await list(key);
    expect(listing.total).toBe(2);
    expect(listing.files.map((file) => file.key)).toEqual([second.key, first.key]);
    expect(listing.files[0]).toMatchObject({ key: second.key, url: second.url, md5: second.md5, size: 11, content_type: "text/plain", filename: "notes.txt" });
    expect(Date.parse(listing.files[0]!.created_at)).toBeGreaterThanOrEqual(Date.parse(listing.files[1]!.created_at));
  });

  it("pages with limit and offset, counting every file in total", async () => {
    const { key, userId } = await createUser();
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      keys.unshift(await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), name: `f${i}` }));
      await scheduler.wait(5);
    }
    expect(await list(key, "?limit=2")).toMatchObject({ total: 5, files: [{ key: keys[0] }, { key: keys[1] }] });
    expect((await list(key, "?limit=2&offset=4")).files.map((file) => file.key)).toEqual([keys[4]]);
    expect((await list(key, "?offset=10")).files).toEqual([]);
    expect((await list(key)).files).toHaveLength(5);
  });

  it.each(["?limit=0", "?limit=101", "?limit=0x10", "?limit=1e1", "?offset=-1", "?limit=%2010"])("answers 400 VALIDATION_FAILED to %s", async (query) => {
    const { key } = await createUser();
    await expectProblem(await api(`/api/files${query}`, key), 400, "VALIDATION_FAILED");
  });

  it("answers 401 without an API key", async () => {
    await expectProblem(await api("/api/files", undefined), 401, "UNAUTHORIZED");
  });

  it("is described in the OpenAPI document with its FileList schema", async () => {
    const document = await (await api("/openapi.json", undefined)).json<{ paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> }>>; components: { schemas: Record<string, unknown> } }>();
    expect(document.paths["/api/files"]?.get?.responses["200"]?.content["application/json"]?.schema.$ref).toBe("#/components/schemas/FileList");
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(["FileList", "StoredFile"]));
  });
});
