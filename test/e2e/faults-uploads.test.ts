import { execFile } from "node:child_process";
import { request } from "node:http";
import { mkdtemp, readdir, rm, stat, statfs, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack, authed } from "../../scripts/lib/local-stack";

// Faults under uploads on the real stack. The edge's state directory (local D1 and R2) lives
// on a small tmpfs that the disk tests fill (they need root to mount it; skipped without):
// each upload must get a clear, quick problem and leave nothing behind.

const run = promisify(execFile);
const MiB = 1024 * 1024;
const BIG = 150 * MiB;
const ANSWER_WITHIN_MS = 30_000;
const canMount = process.getuid?.() === 0;

let disk: string;
let stack: Stack;
let key: string;

beforeAll(async () => {
  disk = await mkdtemp("/tmp/ffedge-disk-");
  if (canMount) await run("mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", disk]);
  // The stack keeps its state under the temporary directory: here, the small disk.
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = disk;
  try {
    stack = await Stack.start();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  ({ key } = await stack.createUser());
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  if (disk) {
    if (canMount) await run("umount", [disk]).catch(() => {});
    await rm(disk, { recursive: true, force: true });
  }
});

const FILLER = () => join(disk, "filler");

/** Fills the disk until `leaveBytes` are free. */
async function fillDisk(leaveBytes: number): Promise<void> {
  const { bavail, bsize } = await statfs(disk);
  await writeFile(FILLER(), Buffer.alloc(Math.max(0, bavail * bsize - leaveBytes)));
}

async function freeDisk(): Promise<void> {
  await rm(FILLER(), { force: true });
}

/** Bytes of R2 object and part data on disk. */
async function r2BlobBytes(): Promise<number> {
  const r2 = await findDir(disk, "r2");
  let total = 0;
  for (const entry of r2 ? await readdir(r2, { recursive: true, withFileTypes: true }) : []) {
    if (entry.isFile() && entry.parentPath.endsWith("blobs")) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** Multipart uploads R2 still holds open (miniflare's own table). */
async function openMultipartUploads(): Promise<number> {
  const r2 = await findDir(disk, "r2");
  let open = 0;
  for (const entry of r2 ? await readdir(r2, { recursive: true, withFileTypes: true }) : []) {
    if (!entry.isFile() || !/^[0-9a-f]{64}\.sqlite$/.test(entry.name) || !entry.parentPath.includes("R2BucketObject")) continue;
    const db = new DatabaseSync(join(entry.parentPath, entry.name), { readOnly: true });
    try {
      open += (db.prepare("SELECT COUNT(*) AS n FROM _mf_multipart_uploads WHERE state = 0").get() as { n: number }).n;
    } finally {
      db.close();
    }
  }
  return open;
}

async function findDir(root: string, name: string): Promise<string | undefined> {
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory() && entry.name === name && entry.parentPath.endsWith("v3")) return join(entry.parentPath, entry.name);
  }
  return undefined;
}

/** An endless-looking MP4 body of `size` bytes, generated as it is sent. */
function mp4Body(size: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(MiB);
  chunk.set([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d]);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      controller.enqueue(chunk.slice());
      sent += chunk.byteLength;
    },
  });
}

function multipartBody(size: number): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = "ffedge-disk-full";
  const encoder = new TextEncoder();
  const head = encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const file = mp4Body(size).getReader();
  let phase: "head" | "file" | "done" = "head";
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (phase === "head") {
        phase = "file";
        return controller.enqueue(head);
      }
      if (phase === "done") return controller.close();
      const { done, value } = await file.read();
      if (!done) return controller.enqueue(value);
      phase = "done";
      controller.enqueue(tail);
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

type Answer = { status?: number; code?: string; retryAfter?: string; ms: number; error?: string };

/**
 * Sends the request (node:http, which reads an early answer while the body is still being
 * sent, as curl does) and resolves with the answer, or with the error when none came in time.
 */
function answerOf(url: string, init: { method?: string; headers?: Record<string, string>; body?: ReadableStream<Uint8Array> }): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const outgoing = request(url, { method: init.method ?? "GET", headers: init.headers }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString()));
      response.on("end", () => {
        const code = (JSON.parse(text || "{}") as { code?: string }).code;
        resolve({ status: response.statusCode, code, retryAfter: response.headers["retry-after"], ms: Date.now() - started });
        outgoing.destroy();
      });
    });
    const deadline = setTimeout(() => outgoing.destroy(new Error("no answer")), ANSWER_WITHIN_MS);
    outgoing.on("close", () => clearTimeout(deadline));
    outgoing.on("error", (error) => resolve({ ms: Date.now() - started, error: error.message }));
    if (!init.body) return void outgoing.end();
    const reader = init.body.getReader();
    const pump = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || outgoing.destroyed) return void outgoing.end();
        if (!outgoing.write(value)) await new Promise((resume) => outgoing.once("drain", resume));
      }
    };
    pump().catch(() => {});
  });
}

function withKey(init: { method?: string; headers?: Record<string, string>; body?: ReadableStream<Uint8Array> } = {}) {
  return { ...init, headers: { ...init.headers, authorization: `Bearer ${key}` } };
}

/**
 * workerd hides why D1 or R2 failed (an "internal error" with a reference), so a full disk may
 * be named STORAGE_FULL (507) or only STORAGE_UNAVAILABLE (503); never a bare 500, never
 * silence. A client still sending a large body when the answer comes may see the connection
 * reset instead of reading it (as in uploads-refused.test.ts): quick, and nothing is kept.
 */
function expectStorageProblem(answer: Answer): void {
  expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS);
  if (answer.status === undefined) return void expect(answer.error).toMatch(/ECONNRESET|EPIPE|socket hang up/);
  expect([507, 503]).toContain(answer.status);
  expect(["STORAGE_FULL", "STORAGE_UNAVAILABLE"]).toContain(answer.code);
  expect(answer.retryAfter).toBeTruthy();
}

describe.skipIf(!canMount)("a full state disk on the real stack", () => {
  it("answers a 150 MB signed PUT with a storage problem within seconds, and keeps none of it", async () => {
    const sign = await stack.fetch("/v1/uploads/sign", authed(key, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ filename: "big.mp4", size: BIG, content_type: "video/mp4" }),
    }));
    const { upload_url } = (await sign.json()) as { upload_url: string };
    await fillDisk(4 * MiB);
    try {
      const answer = await answerOf(upload_url, { method: "PUT", headers: { "content-type": "video/mp4", "content-length": String(BIG) }, body: mp4Body(BIG) });
      expectStorageProblem(answer);
    } finally {
      await freeDisk();
    }
    expect(await r2BlobBytes()).toBe(0);
  }, 120_000);

  it("answers a 150 MB streamed multipart upload with a storage problem within seconds, and leaves no part or open upload", async () => {
    await fillDisk(12 * MiB);
    try {
      const { body, contentType } = multipartBody(BIG);
      expectStorageProblem(await answerOf(`${stack.edgeUrl}/api/upload/file`, withKey({ method: "POST", headers: { "content-type": contentType }, body })));
    } finally {
      await freeDisk();
    }
    expect(await r2BlobBytes()).toBe(0);
    expect(await openMultipartUploads()).toBe(0);
  }, 120_000);

  it("answers every API call with a storage problem or its answer while the disk is full, never a bare 500", async () => {
    await fillDisk(0);
    try {
      for (const path of ["/v1/me", "/api/files", "/v1/tasks"]) {
        const answer = await answerOf(`${stack.edgeUrl}${path}`, withKey());
        if (answer.status !== 200) expectStorageProblem(answer);
      }
      const submit = await answerOf(`${stack.edgeUrl}/v1/tasks`, withKey({
        method: "POST", headers: { "content-type": "application/json" }, body: new Blob([JSON.stringify({ command: "ffmpeg -i https://example.com/a.mp4 out.mp4" })]).stream(),
      }));
      expectStorageProblem(submit);
    } finally {
      await freeDisk();
    }
    expect((await stack.fetch("/v1/me", authed(key))).status).toBe(200);
  }, 60_000);
});

/** A tus PATCH that sends `bytes` and then keeps its connection open, sending nothing more. */
function hangingPatch(path: string, bytes: Uint8Array): { sent: Promise<void>; destroy: () => void } {
  const outgoing = request(`${stack.edgeUrl}${path}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${key}`, "tus-resumable": "1.0.0", "upload-offset": "0", "content-type": "application/offset+octet-stream", "transfer-encoding": "chunked" },
  });
  outgoing.on("error", () => {});
  const sent = new Promise<void>((resolve) => outgoing.write(bytes, () => resolve()));
  return { sent, destroy: () => outgoing.destroy() };
}

async function tusOffset(path: string): Promise<number> {
  const response = await stack.fetch(path, authed(key, { method: "HEAD", headers: { "tus-resumable": "1.0.0" } }));
  return Number(response.headers.get("upload-offset"));
}

describe("a resumable upload cut by a restart of the edge", () => {
  it("resumes within seconds: the dead PATCH's lock does not outlive it", async () => {
    const file = new Uint8Array(8 * MiB).map((_, i) => (i * 31) % 251);
    file.set([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d]);
    const created = await stack.fetch("/api/upload/tus", authed(key, {
      method: "POST", headers: { "tus-resumable": "1.0.0", "upload-length": String(file.byteLength), "upload-metadata": `filename ${btoa("resume.mp4")},filetype ${btoa("video/mp4")}` },
    }));
    expect(created.status).toBe(201);
    const path = new URL(created.headers.get("location")!).pathname;
    // More than one 5 MiB part, so the PATCH commits progress, then holds its lock while silent.
    const first = hangingPatch(path, file.subarray(0, 6 * MiB));
    await first.sent;
    for (const deadline = Date.now() + 30_000; (await tusOffset(path)) < 5 * MiB; ) {
      if (Date.now() > deadline) throw new Error("the first part was never committed");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await stack.restartEdge();
    first.destroy();
    const restarted = Date.now();
    // An empty PATCH asks for the lock without sending bytes a refusal would cut off.
    let probe: Response;
    for (;;) {
      probe = await stack.fetch(path, authed(key, {
        method: "PATCH", headers: { "tus-resumable": "1.0.0", "upload-offset": String(await tusOffset(path)), "content-type": "application/offset+octet-stream" }, body: new Uint8Array(0),
      }));
      if (probe.status !== 409 || Date.now() - restarted > 90_000) break;
      await new Promise((resolve) => setTimeout(resolve, Number(probe.headers.get("retry-after") ?? 1) * 1000));
    }
    expect(probe.status, await probe.text()).toBe(204);
    expect(Date.now() - restarted).toBeLessThan(25_000);
    const offset = await tusOffset(path);
    const answer = await stack.fetch(path, authed(key, {
      method: "PATCH", headers: { "tus-resumable": "1.0.0", "upload-offset": String(offset), "content-type": "application/offset+octet-stream" }, body: file.subarray(offset),
    }));
    expect(answer.status, await answer.clone().text()).toBe(204);
    const record = JSON.parse(answer.headers.get("upload-record")!) as { size: number };
    expect(record.size).toBe(file.byteLength);
  }, 180_000);
});

