import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, md5Hex, pathOf } from "../helpers";
import { HTML_PAGE, patternBytes } from "../files/origin";
import { expectProblem } from "../../helpers/problems";
import {
  TUS, breakingBody, chunkedBody, createUpload, head, heldBody, metadataHeader, offsetOf, patch, patchInPieces, tusObjects, untilUnlocked, uploadRow,
} from "../files/tus/tus-client";

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const LIMIT = Number(env.MAX_UPLOAD_BYTES);

interface UploadRecord {
  url: string;
  key: string;
  md5: string;
  size: number;
  content_type: string;
  expires_at: string;
}

function recordOf(response: Response): UploadRecord {
  const header = response.headers.get("upload-record");
  expect(header, "Upload-Record header").not.toBeNull();
  return JSON.parse(header!) as UploadRecord;
}

/** Downloads the record's CDN URL; compares by MD5, since a byte-wise diff of megabytes is too slow to report. */
async function expectServed(record: UploadRecord, bytes: Uint8Array): Promise<void> {
  const download = await api(pathOf(record.url), undefined);
  expect(download.status).toBe(200);
  const served = new Uint8Array(await download.arrayBuffer());
  expect(served.byteLength).toBe(bytes.byteLength);
  expect(await md5Hex(served)).toBe(await md5Hex(bytes));
}

describe("OPTIONS /api/upload/tus", () => {
  it("advertises the tus version, extensions and maximum size without a key", async () => {
    const response = await api("/api/upload/tus", undefined, { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("tus-version")).toBe("1.0.0");
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    expect(response.headers.get("tus-extension")?.split(",")).toEqual(expect.arrayContaining(["creation", "termination"]));
    expect(response.headers.get("tus-max-size")).toBe(String(LIMIT));
  });

  it("answers a browser's CORS preflight for an upload URL, allowing the tus and auth headers", async () => {
    const response = await api("/api/upload/tus/upl_00000000000000000000000000000000", undefined, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "PATCH", "access-control-request-headers": "authorization,tus-resumable,upload-offset,content-type" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toContain("PATCH");
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("upload-offset");
    expect(response.headers.get("access-control-expose-headers")).toContain("Upload-Record");
  });
});

describe("POST /api/upload/tus", () => {
  it("creates an upload at Location that HEAD reports empty, with its length, metadata and expiry", async () => {
    const { key } = await createUser();
    const { response, path, id } = await createUpload(key, 1234, { filename: "holiday clip.mp4", filetype: "video/mp4" });
    expect(response.status).toBe(201);
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    expect(response.headers.get("location")).toMatch(/^http:\/\/localhost:8787\/api\/upload\/tus\/upl_[0-9a-f]{32}$/);
    expect(Date.parse(response.headers.get("upload-expires")!)).toBeGreaterThan(Date.now() + 23 * 3_600_000);

    const status = await head(key, path);
    expect(status.status).toBe(200);
    expect(status.headers.get("upload-offset")).toBe("0");
    expect(status.headers.get("upload-length")).toBe("1234");
    expect(status.headers.get("cache-control")).toBe("no-store");
    expect(status.headers.get("tus-resumable")).toBe("1.0.0");
    expect(status.headers.get("upload-metadata")).toBe(metadataHeader({ filename: "holiday clip.mp4", filetype: "video/mp4" }));
    expect(await uploadRow(id)).toMatchObject({ state: "uploading", upload_offset: 0 });
  });

  it("answers 412 with Tus-Version to a request without Tus-Resumable or with another version", async () => {
    const { key } = await createUser();
    for (const headers of [{}, { "Tus-Resumable": "0.2.2" }] as Record<string, string>[]) {
      const response = await api("/api/upload/tus", key, { method: "POST", headers: { ...headers, "Upload-Length": "10" } });
      expect(response.headers.get("tus-version")).toBe("1.0.0");
      expect(response.headers.get("tus-resumable")).toBe("1.0.0");
      await expectProblem(response, 412, "TUS_VERSION_UNSUPPORTED");
    }
  });

  it("answers 401 without an API key", async () => {
    const response = await api("/api/upload/tus", undefined, { method: "POST", headers: { ...TUS, "Upload-Length": "10" } });
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    await expectProblem(response, 401, "UNAUTHORIZED");
  });

  it("answers 413 to an Upload-Length over the limit and creates nothing", async () => {
    const { key, userId } = await createUser();
    const { response } = await createUpload(key, LIMIT + 1);
    expect(response.headers.get("tus-max-size")).toBe(String(LIMIT));
    await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tus_uploads WHERE user_id = ?").bind(userId).first("n")).toBe(0);
  });

  it("answers 400 to a missing, malformed or deferred Upload-Length, an empty file and malformed metadata", async () => {
    const { key } = await createUser();
    const post = (headers: Record<string, string>) => api("/api/upload/tus", key, { method: "POST", headers: { ...TUS, ...headers } });
    await expectProblem(await post({}), 400, "VALIDATION_FAILED");
    await expectProblem(await post({ "Upload-Length": "-5" }), 400, "VALIDATION_FAILED");
    await expectProblem(await post({ "Upload-Length": "12abc" }), 400, "VALIDATION_FAILED");
    await expectProblem(await post({ "Upload-Defer-Length": "1" }), 400, "VALIDATION_FAILED");
    await expectProblem(await post({ "Upload-Length": "0" }), 400, "EMPTY_FILE");
    await expectProblem(await post({ "Upload-Length": "10", "Upload-Metadata": "filename not*base64" }), 400, "VALIDATION_FAILED");
    await expectProblem(await post({ "Upload-Length": "10", "Upload-Metadata": "a b c" }), 400, "VALIDATION_FAILED");
  });

  it("replays the creation for a repeated Idempotency-Key instead of creating a second upload", async () => {
    const { key, userId } = await createUser();
    const first = await createUpload(key, 100, undefined, { "Idempotency-Key": "create-1" });
    const again = await createUpload(key, 100, undefined, { "Idempotency-Key": "create-1" });
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get("location")).toBe(first.response.headers.get("location"));
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(again.response.headers.get("tus-resumable")).toBe("1.0.0");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tus_uploads WHERE user_id = ?").bind(userId).first("n")).toBe(1);
    const other = await createUpload(key, 200, undefined, { "Idempotency-Key": "create-1" });
    await expectProblem(other.response, 409, "IDEMPOTENCY_KEY_REUSED");
  });
});

describe("PATCH /api/upload/tus/{id}", () => {
  it("stores a small file in one PATCH and answers its record in Upload-Record", async () => {
    const { key, userId } = await createUser();
    const bytes = patternBytes(0, 1000);
    const { path } = await createUpload(key, bytes.byteLength, { filename: "tiny.mp4", filetype: "video/mp4" });
    const response = await patch(key, path, 0, bytes);
    expect(response.status).toBe(204);
    expect(response.headers.get("upload-offset")).toBe("1000");
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    const record = recordOf(response);
    expect(record).toMatchObject({ size: 1000, md5: await md5Hex(bytes), content_type: "video/mp4" });
    expect(record.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    await expectServed(record, bytes);
    const row = await env.DB.prepare("SELECT original_name, expires_at FROM files WHERE key = ?").bind(record.key).first();
    expect(row).toEqual({ original_name: "tiny.mp4", expires_at: record.expires_at });
  });

  it("round-trips a file sent in uneven PATCHes across part boundaries, byte for byte with the MD5 of the whole file", async () => {
    const { key, userId } = await createUser();
    const bytes = patternBytes(0, 3 * PART + 123);
    const { path, id } = await createUpload(key, bytes.byteLength);
    // 3 MiB (a tail only), then 4 MiB + 7 (completes part 1, new tail), then 6 MiB (part 2), then the rest.
    const sizes = [3 * MiB, 4 * MiB + 7, 6 * MiB];
    let offset = 0;
    for (const size of sizes) {
      const response = await patch(key, path, offset, bytes.slice(offset, offset + size));
      expect(response.status).toBe(204);
      offset += size;
      expect(response.headers.get("upload-offset")).toBe(String(offset));
      expect(await offsetOf(key, path)).toBe(offset);
      const row = await uploadRow(id);
      expect(row!.tail_size).toBe(offset % PART);
      expect(JSON.parse(row!.parts)).toHaveLength(Math.floor(offset / PART));
    }
    const last = await patch(key, path, offset, bytes.slice(offset));
    expect(last.status).toBe(204);
    const record = recordOf(last);
    expect(record).toMatchObject({ size: bytes.byteLength, md5: await md5Hex(bytes), content_type: "video/mp4" });
    await expectServed(record, bytes);
    expect(await tusObjects(id)).toEqual([]);
    expect(await uploadRow(id)).toMatchObject({ state: "completed", lock_token: null, tail_size: 0 });
    expect((await env.FILES.list({ prefix: `uploads/${userId}/` })).objects.map((o) => o.key)).toEqual([record.key]);
  }, 60_000);

  it("keeps every byte of a PATCH that breaks off: HEAD tells the saved offset and the upload resumes from it", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 2 * PART + 4321);
    const { path, id } = await createUpload(key, bytes.byteLength);
    // Breaks off past the first part, mid-tail.
    const sent = PART + 2 * MiB + 5;
    await patch(key, path, 0, breakingBody(bytes.slice(0, sent))).catch(() => undefined);
    const saved = await untilUnlocked(id);
    expect(saved.upload_offset).toBe(sent);
    expect(await offsetOf(key, path)).toBe(sent);
    // A second break inside the tail region, then the rest.
    const more = sent + MiB + 1;
    await patch(key, path, sent, breakingBody(bytes.slice(sent, more))).catch(() => undefined);
    await untilUnlocked(id);
    expect(await offsetOf(key, path)).toBe(more);
    const last = await patch(key, path, more, bytes.slice(more));
    expect(last.status).toBe(204);
    const record = recordOf(last);
    expect(record.md5).toBe(await md5Hex(bytes));
    await expectServed(record, bytes);
  }, 60_000);

  it("classifies the file from its first bytes even when they arrive over several PATCHes", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 3000);
    const { path } = await createUpload(key, bytes.byteLength, { filename: "upload.bin" });
    const last = await patchInPieces(key, path, bytes, [100, 100, 500]);
    expect(last.status).toBe(204);
    expect(recordOf(last)).toMatchObject({ content_type: "video/mp4", size: 3000, md5: await md5Hex(bytes) });
  });

  it("reads Uppy's name/type metadata keys as the file name and declared type", async () => {
    const { key } = await createUser();
    const bytes = new TextEncoder().encode("1\n00:00:01,000 --> 00:00:02,000\nhello\n");
    const { path } = await createUpload(key, bytes.byteLength, { name: "subs.srt", type: "application/x-subrip" });
    const record = recordOf(await patch(key, path, 0, bytes));
    expect(record).toMatchObject({ content_type: "application/x-subrip" });
    expect(record.key).toMatch(/\.srt$/);
  });

  it("refuses bytes that contradict the declared type and terminates the upload", async () => {
    const { key } = await createUser();
    const page = new TextEncoder().encode(HTML_PAGE.padEnd(600, " "));
    const { path, id } = await createUpload(key, page.byteLength, { filename: "clip.mp4", filetype: "video/mp4" });
    await expectProblem(await patch(key, path, 0, page), 400, "CONTENT_TYPE_MISMATCH");
    expect((await head(key, path)).status).toBe(410);
    expect(await tusObjects(id)).toEqual([]);
  });

  it("answers 409 with the stored offset to a PATCH at another offset", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 2000);
    const { path } = await createUpload(key, bytes.byteLength);
    expect((await patch(key, path, 0, bytes.slice(0, 700))).status).toBe(204);
    const response = await patch(key, path, 500, bytes.slice(500));
    expect(response.headers.get("upload-offset")).toBe("700");
    await expectProblem(response, 409, "UPLOAD_OFFSET_MISMATCH");
    expect(await offsetOf(key, path)).toBe(700);
  });

  it("answers 415 to a body that is not application/offset+octet-stream", async () => {
    const { key } = await createUser();
    const { path } = await createUpload(key, 10);
    await expectProblem(await patch(key, path, 0, "0123456789", { "Content-Type": "application/octet-stream" }), 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(await offsetOf(key, path)).toBe(0);
  });

  it("answers 400 to a missing or malformed Upload-Offset", async () => {
    const { key } = await createUser();
    const { path } = await createUpload(key, 10);
    const response = await api(path, key, { method: "PATCH", headers: { ...TUS, "Content-Type": "application/offset+octet-stream" }, body: "0123456789" });
    await expectProblem(response, 400, "VALIDATION_FAILED");
    await expectProblem(await patch(key, path, 0, "0123456789", { "Upload-Offset": "zero" }), 400, "VALIDATION_FAILED");
  });

  it("answers 413 to a body whose Content-Length runs past Upload-Length, and stores nothing of it", async () => {
    const { key, userId } = await createUser();
    const { path, id } = await createUpload(key, 10);
    await expectProblem(await patch(key, path, 0, "0123456789AB"), 413, "PAYLOAD_TOO_LARGE");
    expect(await offsetOf(key, path)).toBe(0);
    expect(await uploadRow(id)).toMatchObject({ lock_token: null });
    expect((await env.FILES.list({ prefix: `uploads/${userId}/` })).objects).toEqual([]);
  });

  it("stores exactly Upload-Length bytes when a streamed body runs on past it", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 4096);
    const { path } = await createUpload(key, 3000);
    // A stream body goes out chunked, without a Content-Length to refuse it up front.
    const response = await patch(key, path, 0, chunkedBody(bytes, 1024));
    expect(response.status).toBe(204);
    expect(recordOf(response)).toMatchObject({ size: 3000, md5: await md5Hex(bytes.slice(0, 3000)) });
  });

  it("lets only one of two concurrent PATCHes hold the upload: the other gets 409 and nothing is corrupted", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, PART + 1000);
    const { path, id } = await createUpload(key, bytes.byteLength);
    const held = heldBody();
    const first = patch(key, path, 0, held.body);
    held.send(bytes.slice(0, 4096));
    for (let i = 0; i < 200 && (await uploadRow(id))?.lock_token === null; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const second = await patch(key, path, 0, bytes);
    await expectProblem(second, 409, "UPLOAD_LOCKED");
    held.send(bytes.slice(4096));
    held.end();
    const done = await first;
    expect(done.status).toBe(204);
    expect(recordOf(done).md5).toBe(await md5Hex(bytes));
  });

  it("answers 204 with the record to a repeated final PATCH of a completed upload, and 409 at any other offset", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 800);
    const { path } = await createUpload(key, bytes.byteLength);
    const record = recordOf(await patch(key, path, 0, bytes));
    const repeated = await patch(key, path, 800, new Uint8Array(0));
    expect(repeated.status).toBe(204);
    expect(repeated.headers.get("upload-offset")).toBe("800");
    expect(recordOf(repeated)).toEqual(record);
    await expectProblem(await patch(key, path, 0, bytes), 409, "UPLOAD_OFFSET_MISMATCH");
  });

  it("accepts a PATCH sent as POST with X-HTTP-Method-Override", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 600);
    const { path } = await createUpload(key, bytes.byteLength);
    const response = await api(path, key, {
      method: "POST",
      headers: { ...TUS, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0", "X-HTTP-Method-Override": "PATCH" },
      body: bytes,
    });
    expect(response.status).toBe(204);
    expect(recordOf(response).md5).toBe(await md5Hex(bytes));
  });
});

describe("HEAD /api/upload/tus/{id}", () => {
  it("reports a completed upload as full, with its record", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 700);
    const { path } = await createUpload(key, bytes.byteLength);
    const record = recordOf(await patch(key, path, 0, bytes));
    const response = await head(key, path);
    expect(response.status).toBe(200);
    expect(response.headers.get("upload-offset")).toBe("700");
    expect(recordOf(response)).toEqual(record);
  });

  it("answers 404 for an unknown id and for another user's upload, on every method", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const { path } = await createUpload(owner.key, 100);
    for (const target of [path, "/api/upload/tus/upl_00000000000000000000000000000000", "/api/upload/tus/not-an-id"]) {
      expect((await head(stranger.key, target)).status).toBe(404);
      await expectProblem(await patch(stranger.key, target, 0, "x"), 404, "NOT_FOUND");
      await expectProblem(await api(target, stranger.key, { method: "DELETE", headers: TUS }), 404, "NOT_FOUND");
      await expectProblem(await api(`${target}/record`, stranger.key), 404, "NOT_FOUND");
    }
    expect((await head(owner.key, path)).status).toBe(200);
  });

  it("answers 410 once the upload has expired", async () => {
    const { key } = await createUser();
    const { path, id } = await createUpload(key, 100);
    await env.DB.prepare("UPDATE tus_uploads SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), id).run();
    expect((await head(key, path)).status).toBe(410);
    await expectProblem(await patch(key, path, 0, "x".repeat(100)), 410, "UPLOAD_GONE");
  });
});

describe("DELETE /api/upload/tus/{id}", () => {
  it("terminates an unfinished upload, frees its parts and tail, and answers 410 afterwards", async () => {
    const { key, userId } = await createUser();
    const bytes = patternBytes(0, 2 * PART);
    const { path, id } = await createUpload(key, bytes.byteLength);
    expect((await patch(key, path, 0, bytes.slice(0, PART + 1000))).status).toBe(204);
    const { file_key, multipart_id } = (await uploadRow(id))!;
    expect(await tusObjects(id)).toEqual([`tus/${id}/tail`]);

    const response = await api(path, key, { method: "DELETE", headers: TUS });
    expect(response.status).toBe(204);
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    expect(await tusObjects(id)).toEqual([]);
    // The multipart upload is aborted: its parts can no longer be completed into an object.
    await expect(env.FILES.resumeMultipartUpload(file_key!, multipart_id!).complete([])).rejects.toThrow();
    expect((await head(key, path)).status).toBe(410);
    await expectProblem(await patch(key, path, PART + 1000, bytes.slice(PART + 1000)), 410, "UPLOAD_GONE");
    await expectProblem(await api(path, key, { method: "DELETE", headers: TUS }), 410, "UPLOAD_GONE");
    expect((await env.FILES.list({ prefix: `uploads/${userId}/` })).objects).toEqual([]);
  });

  it("deletes the file of a completed upload, which the CDN then no longer serves", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 900);
    const { path } = await createUpload(key, bytes.byteLength);
    const record = recordOf(await patch(key, path, 0, bytes));
    expect((await api(path, key, { method: "DELETE", headers: TUS })).status).toBe(204);
    expect((await api(pathOf(record.url), undefined)).status).toBe(404);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM files WHERE key = ?").bind(record.key).first("n")).toBe(0);
  });

  it("answers 412 to a termination without Tus-Resumable", async () => {
    const { key } = await createUser();
    const { path } = await createUpload(key, 100);
    await expectProblem(await api(path, key, { method: "DELETE" }), 412, "TUS_VERSION_UNSUPPORTED");
    expect((await head(key, path)).status).toBe(200);
  });
});

describe("GET /api/upload/tus/{id}/record", () => {
  it("answers 409 until the upload is complete, then the upload record", async () => {
    const { key } = await createUser();
    const bytes = patternBytes(0, 1500);
    const { path } = await createUpload(key, bytes.byteLength);
    await patch(key, path, 0, bytes.slice(0, 600));
    const early = await api(`${path}/record`, key);
    expect(await expectProblem(early, 409, "UPLOAD_INCOMPLETE")).toMatchObject({ upload_offset: 600, upload_length: 1500 });
    const record = recordOf(await patch(key, path, 600, bytes.slice(600)));
    const response = await api(`${path}/record`, key);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(record);
  });
});
