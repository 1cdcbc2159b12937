import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { recordOpenMultipart, sweepOpenMultipartUploads } from "../../../edge/files/open-multiparts";
import { putStream } from "../../../edge/files/stream-store";

const MB = 1024 * 1024;
const HOUR = 3_600_000;

/** What a request that died mid-upload leaves: an open multipart upload with a part, and its record. */
async function cutOffUpload(name: string): Promise<{ key: string; uploadId: string; part: R2UploadedPart }> {
  const key = `uploads/test/${name}-${crypto.randomUUID()}.bin`;
  const upload = await env.FILES.createMultipartUpload(key);
  await recordOpenMultipart(env.DB, upload);
  const part = await upload.uploadPart(1, new Uint8Array(5 * MB).fill(3));
  return { key, uploadId: upload.uploadId, part };
}

async function recorded(uploadId: string): Promise<boolean> {
  return (await env.DB.prepare("SELECT 1 AS one FROM open_multipart_uploads WHERE upload_id = ?").bind(uploadId).first()) !== null;
}

describe("sweepOpenMultipartUploads", () => {
  it("aborts a multipart upload a dead request left open past the bound, freeing its parts", async () => {
    const left = await cutOffUpload("dead");
    expect(await sweepOpenMultipartUploads(env, new Date(Date.now() + 7 * HOUR))).toBeGreaterThanOrEqual(1);
    expect(await recorded(left.uploadId)).toBe(false);
    await expect(env.FILES.resumeMultipartUpload(left.key, left.uploadId).complete([left.part])).rejects.toThrow();
    expect(await env.FILES.head(left.key)).toBeNull();
  });

  it("leaves an upload younger than the bound open: its request may still be streaming", async () => {
    const young = await cutOffUpload("young");
    await sweepOpenMultipartUploads(env);
    expect(await recorded(young.uploadId)).toBe(true);
    await env.FILES.resumeMultipartUpload(young.key, young.uploadId).complete([young.part]);
    expect((await env.FILES.head(young.key))?.size).toBe(5 * MB);
  });
});

describe("putStream's multipart uploads", () => {
  const options = { maxBytes: 200 * MB, httpMetadata: { contentType: "application/octet-stream" }, customMetadata: {}, openUploads: env.DB };

  function body(size: number, failAt?: number): ReadableStream<Uint8Array> {
    let sent = 0;
    return new ReadableStream({
      pull(controller) {
        if (failAt !== undefined && sent >= failAt) return controller.error(new Error("the client went away"));
        if (sent >= size) return controller.close();
        controller.enqueue(new Uint8Array(MB).fill(7));
        sent += MB;
      },
    });
  }

  async function openCount(): Promise<number> {
    return (await env.DB.prepare("SELECT COUNT(*) AS n FROM open_multipart_uploads").first<{ n: number }>())!.n;
  }

  it("records the upload only while it is open: none is left once stored", async () => {
    const before = await openCount();
    await putStream(env.FILES, `uploads/test/whole-${crypto.randomUUID()}.bin`, body(12 * MB), options);
    expect(await openCount()).toBe(before);
  });

  it("aborts and forgets the upload when its body fails", async () => {
    const before = await openCount();
    await expect(putStream(env.FILES, `uploads/test/broken-${crypto.randomUUID()}.bin`, body(20 * MB, 12 * MB), options)).rejects.toThrow();
    expect(await openCount()).toBe(before);
  });
});
