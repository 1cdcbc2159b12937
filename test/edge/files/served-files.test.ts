import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isServed, servedKeyOf } from "../../../edge/files/served-files";
import { api, createUser, fakeMp4, uploadFile } from "../helpers";

describe("servedKeyOf", () => {
  it.each([
    ["http://localhost:8787/uploads/usr_a/f1.mp4", "uploads/usr_a/f1.mp4"],
    ["http://127.0.0.1:8787/uploads/usr_a/f1.mp4?download=1", "uploads/usr_a/f1.mp4"],
    ["http://127.0.0.1:8787/outputs/usr_a/tsk_b/my%20clip.mp4", "outputs/usr_a/tsk_b/my clip.mp4"],
  ])("reads %s as our file %s", (url, key) => {
    expect(servedKeyOf(env, url)).toBe(key);
  });

  it.each([
    "https://example.com/uploads/usr_a/f1.mp4",
    "http://localhost:9999/uploads/usr_a/f1.mp4",
    "http://localhost:8787/v1/tasks",
    "http://localhost:8787/logs/usr_a/tsk_b.log",
    "http://localhost:8787/uploads/%E0%A4%A",
    "not a url",
  ])("does not take %s for one of our files", (url) => {
    expect(servedKeyOf(env, url)).toBeUndefined();
  });
});

describe("isServed", () => {
  it("holds while an upload is unexpired, and not after its expiry or once it is deleted", async () => {
    const { key } = await createUser();
    const upload = await (await uploadFile(key, fakeMp4())).json<{ key: string; expires_at: string }>();
    expect(await isServed(env, upload.key)).toBe(true);
    expect(await isServed(env, upload.key, new Date(Date.parse(upload.expires_at) + 1000))).toBe(false);
    expect((await api(`/api/files/${upload.key}`, key, { method: "DELETE" })).status).toBe(204);
    expect(await isServed(env, upload.key)).toBe(false);
  });

  it("reads the expiry from the file's row when its object carries none (a presigned upload)", async () => {
    const { userId } = await createUser();
    const objectKey = `uploads/${userId}/${"a".repeat(32)}.mp4`;
    await env.FILES.put(objectKey, fakeMp4());
    expect(await isServed(env, objectKey)).toBe(false);
    const now = new Date();
    await env.DB.prepare("INSERT INTO files (key, user_id, kind, size, content_type, created_at, expires_at) VALUES (?, ?, 'upload', 4096, 'video/mp4', ?, ?)")
      .bind(objectKey, userId, now.toISOString(), new Date(now.getTime() + 60_000).toISOString())
      .run();
    expect(await isServed(env, objectKey)).toBe(true);
  });
});
