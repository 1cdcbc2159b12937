import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../../edge/index";
import { sweepAbandonedUploads } from "../../../../edge/files/sweep";
import { api, createUser } from "../../helpers";
import { patternBytes } from "../origin";
import { TUS, createUpload, patch, tusObjects, uploadRow } from "./tus-client";

const HOUR = 3_600_000;
const PART = 5 * 1024 * 1024;

/** An unfinished upload holding one R2 part and a tail. */
async function startedUpload(key: string): Promise<{ id: string; path: string; fileKey: string; multipartId: string }> {
  const bytes = patternBytes(0, PART + 2000);
  const { id, path } = await createUpload(key, 2 * PART);
  expect((await patch(key, path, 0, bytes)).status).toBe(204);
  const row = (await uploadRow(id))!;
  return { id, path, fileKey: row.file_key!, multipartId: row.multipart_id! };
}

async function setRow(id: string, column: "updated_at" | "expires_at", at: Date): Promise<void> {
  await env.DB.prepare(`UPDATE tus_uploads SET ${column} = ? WHERE id = ?`).bind(at.toISOString(), id).run();
}

async function multipartAborted(fileKey: string, multipartId: string): Promise<boolean> {
  return env.FILES.resumeMultipartUpload(fileKey, multipartId).complete([]).then(() => false, (error: Error) => /NoSuchUpload|does not exist/i.test(error.message));
}

describe("sweepAbandonedUploads", () => {
  it("aborts an upload idle for 24 h: its parts, its tail and its row go; an active upload stays", async () => {
    const { key } = await createUser();
    const idle = await startedUpload(key);
    const active = await startedUpload(key);
    await setRow(idle.id, "updated_at", new Date(Date.now() - 25 * HOUR));
    expect(await sweepAbandonedUploads(env)).toBeGreaterThanOrEqual(1);
    expect(await uploadRow(idle.id)).toBeNull();
    expect(await tusObjects(idle.id)).toEqual([]);
    expect(await multipartAborted(idle.fileKey, idle.multipartId)).toBe(true);
    expect((await api(idle.path, key, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect(await uploadRow(active.id)).toMatchObject({ state: "uploading" });
    expect(await tusObjects(active.id)).toEqual([`tus/${active.id}/tail`]);
  });

  it("aborts an unfinished upload past its expiry even if it was recently active", async () => {
    const { key } = await createUser();
    const expired = await startedUpload(key);
    await setRow(expired.id, "expires_at", new Date(Date.now() - 1000));
    await sweepAbandonedUploads(env);
    expect(await uploadRow(expired.id)).toBeNull();
    expect(await tusObjects(expired.id)).toEqual([]);
  });

  it("keeps a terminated upload until its expiry (so it answers 410), then forgets it", async () => {
    const { key } = await createUser();
    const { id, path } = await createUpload(key, 100);
    expect((await api(path, key, { method: "DELETE", headers: TUS })).status).toBe(204);
    await sweepAbandonedUploads(env);
    expect(await uploadRow(id)).toMatchObject({ state: "terminated" });
    await setRow(id, "expires_at", new Date(Date.now() - 1000));
    await sweepAbandonedUploads(env);
    expect(await uploadRow(id)).toBeNull();
  });

  it("forgets a completed upload at its expiry and leaves its file to the file sweep", async () => {
    const { key } = await createUser();
    const { id, path } = await createUpload(key, 500);
    const record = JSON.parse((await patch(key, path, 0, patternBytes(0, 500))).headers.get("upload-record")!) as { key: string };
    await sweepAbandonedUploads(env, new Date(Date.now() + 25 * HOUR));
    expect(await uploadRow(id)).toBeNull();
    expect(await env.FILES.head(record.key)).not.toBeNull();
  });

  it("leaves an upload a PATCH still holds for the next run", async () => {
    const { key } = await createUser();
    const held = await startedUpload(key);
    await setRow(held.id, "updated_at", new Date(Date.now() - 25 * HOUR));
    await env.DB.prepare("UPDATE tus_uploads SET lock_token = 'busy', lock_expires_at = ? WHERE id = ?").bind(Date.now() + 60_000, held.id).run();
    await sweepAbandonedUploads(env);
    expect(await uploadRow(held.id)).not.toBeNull();
    await env.DB.prepare("UPDATE tus_uploads SET lock_expires_at = ? WHERE id = ?").bind(Date.now() - 1, held.id).run();
    await sweepAbandonedUploads(env);
    expect(await uploadRow(held.id)).toBeNull();
  });

  it("runs from the Worker's scheduled handler", async () => {
    const { key } = await createUser();
    const idle = await startedUpload(key);
    await setRow(idle.id, "updated_at", new Date(Date.now() - 25 * HOUR));
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *", scheduledTime: new Date() }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await uploadRow(idle.id)).toBeNull();
    expect(await tusObjects(idle.id)).toEqual([]);
  });
});
