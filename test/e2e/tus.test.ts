import { createHash, randomBytes } from "node:crypto";
import { Upload } from "tus-js-client";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { flakyLink } from "./relay";
import { Stack, authed } from "../../scripts/lib/local-stack";

type UrlStorage = NonNullable<Upload["options"]["urlStorage"]>;
type PreviousUpload = Awaited<ReturnType<Upload["findPreviousUploads"]>>[number];

/** tus-js-client's URL storage as a browser's localStorage keeps it, here in memory: how a new Upload finds the old one. */
class MemoryUrlStorage implements UrlStorage {
  private readonly uploads = new Map<string, PreviousUpload & { fingerprint: string }>();
  async findAllUploads(): Promise<PreviousUpload[]> {
    return [...this.uploads.values()];
  }
  async findUploadsByFingerprint(fingerprint: string): Promise<PreviousUpload[]> {
    return [...this.uploads.values()].filter((upload) => upload.fingerprint === fingerprint);
  }
  async removeUpload(key: string): Promise<void> {
    this.uploads.delete(key);
  }
  async addUpload(fingerprint: string, upload: PreviousUpload): Promise<string> {
    const key = `tus::${fingerprint}::${this.uploads.size}`;
    this.uploads.set(key, { ...upload, urlStorageKey: key, fingerprint });
    return key;
  }
}

const MiB = 1024 * 1024;
const md5 = (bytes: Uint8Array) => createHash("md5").update(bytes).digest("hex");

let stack: Stack;
let user: { key: string; userId: string };

beforeAll(async () => {
  stack = await Stack.start();
  user = await stack.createUser();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/**
 * The offset once the broken-off PATCH has finished saving: an empty PATCH at the offset HEAD
 * reports succeeds only when no other PATCH holds the upload (it answers 409 meanwhile).
 */
async function settledOffset(path: string): Promise<number> {
  const tus = (init: RequestInit) => stack.fetch(path, authed(user.key, { ...init, headers: { "Tus-Resumable": "1.0.0", ...init.headers } }));
  for (let attempt = 0; attempt < 100; attempt++) {
    const offset = Number((await tus({ method: "HEAD" })).headers.get("upload-offset"));
    const probe = await tus({ method: "PATCH", headers: { "Content-Type": "application/offset+octet-stream", "Upload-Offset": String(offset) }, body: new Uint8Array(0) });
    await probe.body?.cancel();
    if (probe.status === 204) return offset;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the upload at ${path} stayed busy`);
}

describe("a resumable upload with tus-js-client", () => {
  it("is interrupted halfway, resumed by a new Upload from where the server stopped, and downloads byte-exact", async () => {
    // ~12 MB that sniffs as MP4: an ftyp box, then random bytes.
    const file = randomBytes(12 * MiB + 12_345);
    file.set([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d], 0);
    const urlStorage = new MemoryUrlStorage();
    // The first PATCH goes through a link that drops halfway through its body; then the network recovers.
    const link = await flakyLink(stack.edgeUrl, file.byteLength / 2);
    onTestFinished(() => link.stop());
    const options = {
      endpoint: `${link.url}/api/upload/tus`,
      headers: { Authorization: `Bearer ${user.key}` },
      metadata: { filename: "resumed.mp4", filetype: "video/mp4" },
      retryDelays: [0, 250, 500, 1000, 2000],
      urlStorage,
      storeFingerprintForResuming: true,
    };

    // One PATCH for the whole file, and no automatic retry: the new Upload below resumes it.
    const firstUrl = await new Promise<string>((resolve, reject) => {
      const first: Upload = new Upload(file, {
        ...options,
        retryDelays: null,
        onSuccess: () => reject(new Error("the first upload should have broken off")),
        onError: () => resolve(first.url!),
      });
      first.start();
    });
    expect(new URL(firstUrl).origin).toBe(link.url);
    const uploadPath = new URL(firstUrl).pathname;

    // The server kept what arrived before the drop: more than nothing, less than the file.
    const stored = await settledOffset(uploadPath);
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(file.byteLength);

    const resumedAt: number[] = [];
    const { url, record } = await new Promise<{ url: string; record: string | undefined }>((resolve, reject) => {
      const second: Upload = new Upload(file, {
        ...options,
        // Below Cloudflare's 100 MB request cap; uneven against the server's 5 MiB parts on purpose.
        chunkSize: 4 * MiB,
        onAfterResponse: (request, response) => {
          if (request.getMethod() === "HEAD") resumedAt.push(Number(response.getHeader("Upload-Offset")));
        },
        onSuccess: ({ lastResponse }) => resolve({ url: second.url!, record: lastResponse.getHeader("Upload-Record") }),
        onError: reject,
      });
      second.findPreviousUploads().then((previous) => {
        expect(previous).toHaveLength(1);
        second.resumeFromPreviousUpload(previous[0]!);
        second.start();
      }, reject);
    });

    // The new Upload found the old one, asked where it stood and went on from there.
    expect(url).toBe(firstUrl);
    expect(resumedAt[0]).toBe(stored);
    const parsed = JSON.parse(record!) as { url: string; key: string; md5: string; size: number; content_type: string };
    expect(parsed).toMatchObject({ size: file.byteLength, md5: md5(file), content_type: "video/mp4" });
    expect(parsed.key).toMatch(new RegExp(`^uploads/${user.userId}/[0-9a-f]{32}\\.mp4$`));

    const download = await fetch(parsed.url);
    expect(download.status).toBe(200);
    const served = Buffer.from(await download.arrayBuffer());
    expect(served.byteLength).toBe(file.byteLength);
    expect(md5(served)).toBe(md5(file));
    expect(served.equals(file)).toBe(true);

    const viaRoute = await stack.fetch(`${uploadPath}/record`, authed(user.key));
    expect(await viaRoute.json()).toEqual(parsed);
  }, 120_000);
});

describe("Idempotency-Key on the real stack", () => {
  it("turns two concurrent POST /v1/tasks with one key into one task", async () => {
    const other = await stack.createUser();
    const input = await stack.fetch("/api/upload/base64", authed(other.key, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ data: `data:audio/wav;base64,${Buffer.from("RIFF....WAVE").toString("base64")}` }),
    }));
    const { url } = (await input.json()) as { url: string };
    const body = JSON.stringify({ command: `ffmpeg -i ${url} -t 1 out.mp3` });
    const submit = () => stack.fetch("/v1/tasks", authed(other.key, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": "e2e-once" }, body }))
      .then(async (response) => ({ status: response.status, replayed: response.headers.get("idempotent-replayed"), body: (await response.json()) as { task_id?: string } }));
    const [a, b] = await Promise.all([submit(), submit()]);
    expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([201, 201]);
    expect(a.body.task_id).toBe(b.body.task_id);
    expect([a.replayed, b.replayed].filter(Boolean)).toEqual(["true"]);
    const list = (await (await stack.fetch("/v1/tasks", authed(other.key))).json()) as { total: number };
    expect(list.total).toBe(1);
  });
});
