import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../../shared/errors";
import { LOCK_LEASE_MS, LockLost, appendToUpload } from "../../../../edge/files/tus/append";
import { acquireLock } from "../../../../edge/files/tus/repository";
import { createUpload } from "../../../../edge/files/tus/uploads";
import { createUser, md5Hex } from "../../helpers";
import { patternBytes } from "../origin";
import { breakingBody, tusObjects, uploadRow } from "./tus-client";

const MiB = 1024 * 1024;

async function lockedUpload(length: number) {
  const { userId } = await createUser();
  const upload = await createUpload(env, userId, length, { raw: null, filename: "clip.mp4", filetype: "video/mp4" });
  const token = crypto.randomUUID();
  const locked = await acquireLock(env.DB, userId, upload.id, 0, token, LOCK_LEASE_MS);
  return { upload: locked!, token, userId };
}

describe("appendToUpload", () => {
  it("saves every byte received before the body broke off and reports the offset to resume from", async () => {
    const bytes = patternBytes(0, 7 * MiB + 3);
    const { upload, token } = await lockedUpload(12 * MiB);
    const failure = await appendToUpload(env, upload, token, breakingBody(bytes)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({ code: "UPLOAD_INTERRUPTED", headers: { "Upload-Offset": String(bytes.byteLength) } });
    const row = await uploadRow(upload.id);
    expect(row).toMatchObject({ upload_offset: bytes.byteLength, tail_size: 2 * MiB + 3 });
    expect(JSON.parse(row!.parts)).toHaveLength(1);
    const tail = await env.FILES.get(`tus/${upload.id}/tail`);
    expect(await md5Hex(new Uint8Array(await tail!.arrayBuffer()))).toBe(await md5Hex(bytes.slice(5 * MiB)));
  });

  it("writes nothing once its lock has lapsed and been taken by another PATCH", async () => {
    const { upload, token, userId } = await lockedUpload(1000);
    // The lease ran out and another PATCH took the upload.
    await env.DB.prepare("UPDATE tus_uploads SET lock_expires_at = ? WHERE id = ?").bind(Date.now() - 1, upload.id).run();
    expect(await acquireLock(env.DB, userId, upload.id, 0, "the-other-patch", LOCK_LEASE_MS)).not.toBeNull();
    const stale = { ...upload, lock_expires_at: Date.now() - 1 };
    await expect(appendToUpload(env, stale, token, breakingBody(patternBytes(0, 500)))).rejects.toBeInstanceOf(LockLost);
    expect(await tusObjects(upload.id)).toEqual([]);
    expect(await uploadRow(upload.id)).toMatchObject({ upload_offset: 0, lock_token: "the-other-patch" });
  });
});
