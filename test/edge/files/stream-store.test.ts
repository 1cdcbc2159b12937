import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { PART_SIZE, type StoreReport, observeStores, putStream } from "../../../edge/files/stream-store";
import { api, createUser, pathOf } from "../helpers";
import { md5OfStream, streamedFile, streamedMultipart } from "./fixtures";

const MB = 1_000_000;
/** Room for the chunks in flight between the body and the part buffer (64 KiB each). */
const MARGIN = 512 * 1024;

const options = { maxBytes: 200 * MB, httpMetadata: { contentType: "video/mp4" }, customMetadata: {}, openUploads: env.DB };

let stopObserving: (() => void) | undefined;
afterEach(() => stopObserving?.());

function recordReports(): StoreReport[] {
  const reports: StoreReport[] = [];
  stopObserving = observeStores((report) => reports.push(report));
  return reports;
}

async function expectRejection(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
}

describe("putStream memory", () => {
  it("streams a 110 MB multipart upload holding at most two R2 parts (one filling, one uploading)", async () => {
    const reports = recordReports();
    const { key } = await createUser();
    const size = 110 * MB;
    const upload = streamedMultipart(size);
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": upload.contentType }, body: upload.body });
    expect(response.status).toBe(201);
    const record = await response.json<{ key: string; url: string; md5: string; size: number }>();
    expect(record).toMatchObject({ size, md5: await upload.md5 });

    const report = reports.find((entry) => entry.key === record.key);
    expect(report).toMatchObject({ size, multipart: true });
    expect(report!.peakBufferedBytes).toBeGreaterThanOrEqual(PART_SIZE);
    expect(report!.peakBufferedBytes).toBeLessThanOrEqual(2 * PART_SIZE + MARGIN);

    const download = await api(pathOf(record.url), undefined);
    expect(await md5OfStream(download.body!)).toEqual({ md5: record.md5, size });
  }, 120_000);

  it("streams a body of declared length through one PUT holding only chunks in flight", async () => {
    const reports = recordReports();
    const size = 30 * MB;
    const file = streamedFile(size);
    const stored = await putStream(env.FILES, "uploads/test/declared.mp4", file.body, { ...options, length: size });
    expect(stored).toMatchObject({ size, md5: await file.md5 });
    expect(stored.peakBufferedBytes).toBeLessThanOrEqual(MARGIN);
    expect(reports).toEqual([{ ...stored, key: "uploads/test/declared.mp4", multipart: false }]);
    expect((await env.FILES.head("uploads/test/declared.mp4"))?.size).toBe(size);
  }, 60_000);

  it("stops reporting to an observer once it unsubscribes", async () => {
    const reports = recordReports();
    stopObserving?.();
    await putStream(env.FILES, "uploads/test/unobserved.txt", streamedFile(10).body, options);
    expect(reports).toEqual([]);
  });
});

describe("putStream all-or-nothing", () => {
  it("fails with SIZE_MISMATCH and stores nothing when the body is shorter than declared", async () => {
    await expectRejection(putStream(env.FILES, "uploads/test/short.mp4", streamedFile(900).body, { ...options, length: 1000 }), "SIZE_MISMATCH");
    expect(await env.FILES.head("uploads/test/short.mp4")).toBeNull();
  });

  it("fails with SIZE_MISMATCH and stores nothing when the body is longer than declared", async () => {
    await expectRejection(putStream(env.FILES, "uploads/test/long.mp4", streamedFile(1100).body, { ...options, length: 1000 }), "SIZE_MISMATCH");
    expect(await env.FILES.head("uploads/test/long.mp4")).toBeNull();
  });

  it("fails with PAYLOAD_TOO_LARGE and aborts the multipart upload when an unsized body passes the limit", async () => {
    const file = streamedFile(25 * MB);
    await expectRejection(putStream(env.FILES, "uploads/test/too-big.mp4", file.body, { ...options, maxBytes: 21 * MB }), "PAYLOAD_TOO_LARGE");
    expect(await env.FILES.head("uploads/test/too-big.mp4")).toBeNull();
    expect(file.pulled()).toBeLessThan(25 * MB);
  });

  it("fails with PAYLOAD_TOO_LARGE before reading when the declared length is over the limit", async () => {
    const file = streamedFile(MB);
    await expectRejection(putStream(env.FILES, "uploads/test/declared-big.mp4", file.body, { ...options, maxBytes: 1000, length: MB }), "PAYLOAD_TOO_LARGE");
    expect(file.pulled()).toBe(0);
  });

  it("stores nothing when the body fails after several parts", async () => {
    let sent = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 3 * PART_SIZE) return controller.error(new Error("connection reset"));
        sent += 1024 * 1024;
        controller.enqueue(new Uint8Array(1024 * 1024));
      },
    });
    const error = await putStream(env.FILES, "uploads/test/broken.mp4", failing, options).then(() => undefined, (reason: unknown) => reason);
    expect(String(error)).toContain("connection reset");
    expect(await env.FILES.head("uploads/test/broken.mp4")).toBeNull();
  });

  it("stores a small unsized body with one PUT and reports its MD5", async () => {
    const stored = await putStream(env.FILES, "uploads/test/small.txt", new Blob(["hello"]).stream(), options);
    expect(stored).toMatchObject({ size: 5, md5: "5d41402abc4b2a76b9719d911017c592" });
    expect(await (await env.FILES.get("uploads/test/small.txt"))?.text()).toBe("hello");
  });
});
