import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, pathOf, uploadFile } from "../helpers";
import { expectProblem, seedFile } from "../files/fixtures";

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
