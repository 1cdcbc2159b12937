import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FFedge, FFedgeError, type FFedgeOptions } from "../../../clients/sdk/src/index";
import { Stack } from "../../../scripts/lib/local-stack";
import { flakyLink } from "../../e2e/relay";

/**
 * How files.upload() picks its path, on a stack whose limits are production's scaled down:
 * request bodies of at most 2 MiB (Cloudflare's 100 MB), files of at most 8 MiB (1 GB).
 */
const MiB = 1024 * 1024;
const BODY_LIMIT = 2 * MiB;
const FILE_LIMIT = 8 * MiB;

let stack: Stack;
let key: string;
let dir: string;
let big: { path: string; md5: string };

beforeAll(async () => {
  stack = await Stack.start({ edgeVars: { MAX_REQUEST_BODY_BYTES: String(BODY_LIMIT), MAX_UPLOAD_BYTES: String(FILE_LIMIT) } });
  ({ key } = await stack.createUser());
  dir = await mkdtemp(join(tmpdir(), "ffedge-sdk-uploads-"));
  const bytes = randomBytes(3 * MiB + 12_345);
  big = { path: join(dir, "big.bin"), md5: createHash("md5").update(bytes).digest("hex") };
  await writeFile(big.path, bytes);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A client whose requests are written down as "METHOD /path (bytes)", so a test sees which path an upload took. */
function recordingClient(baseUrl = stack.edgeUrl, edit?: (path: string, body: unknown) => unknown, uploads?: FFedgeOptions["uploads"]) {
  const log: string[] = [];
  const ff = new FFedge({
    apiKey: key,
    baseUrl,
    uploads,
    fetch: async (input, init) => {
      const url = new URL(String(input));
      const line = `${init?.method ?? "GET"} ${url.pathname.replace(/upl_[0-9a-f]+/, "<id>")}`;
      const response = await fetch(input, init);
      // A PATCH's body may be a stream of unknown length: its size is how far it moved the offset.
      const from = new Headers(init?.headers).get("upload-offset");
      const to = response.status === 204 ? response.headers.get("upload-offset") : null;
      log.push(from !== null && to !== null ? `${line} (${Number(to) - Number(from)})` : line);
      if (!edit || !response.ok || response.headers.get("content-type") !== "application/json") return response;
      return Response.json(edit(url.pathname, await response.json()), { status: response.status, headers: response.headers });
    },
  });
  return { ff, log };
}

describe("files.upload", () => {
  it("sends a file that fits the request body limit as one multipart request", async () => {
    const { ff, log } = recordingClient();
    const record = await ff.files.upload(new Blob([randomBytes(MiB)]), { filename: "small.bin" });
    expect(record.size).toBe(MiB);
    expect(log).toContain("POST /api/upload/file");
    expect(log.some((line) => line.includes("/tus"))).toBe(false);
  });

  it("sends a file over the body limit by tus in chunks below it, with progress, not multipart", async () => {
    const { ff, log } = recordingClient();
    const progress: number[] = [];
    const record = await ff.files.upload(big.path, {
      onProgress: ({ loaded, total, method }) => {
        expect({ total, method }).toEqual({ total: 3 * MiB + 12_345, method: "tus" });
        progress.push(loaded);
      },
    });
    expect(record).toMatchObject({ size: 3 * MiB + 12_345, md5: big.md5 });
    expect(log).not.toContain("POST /api/upload/file");
    expect(log).toContain("POST /api/upload/tus");
    const chunks = log.filter((line) => line.startsWith("PATCH")).map((line) => Number(/\((\d+)\)/.exec(line)![1]));
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...chunks)).toBeLessThan(BODY_LIMIT);
    expect(progress.at(-1)).toBe(3 * MiB + 12_345);
    // In Node a chunk is streamed and counted, so progress moves before its PATCH is answered.
    expect(progress.some((loaded) => loaded > 0 && loaded < chunks[0]!)).toBe(true);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it("uses tus for files above the multipart threshold even where the body limit allows more", async () => {
    const tuned = recordingClient(stack.edgeUrl, undefined, { multipartMaxBytes: 256 * 1024, tusChunkBytes: 400 * 1024 });
    const record = await tuned.ff.files.upload(new Blob([randomBytes(MiB)]), { filename: "medium.bin" });
    expect(record.size).toBe(MiB);
    expect(tuned.log).not.toContain("POST /api/upload/file");
    expect(tuned.log.filter((line) => line.startsWith("PATCH"))).toEqual(["PATCH /api/upload/tus/<id> (409600)", "PATCH /api/upload/tus/<id> (409600)", "PATCH /api/upload/tus/<id> (229376)"]);
    const forced = recordingClient();
    const again = await forced.ff.files.upload(new Blob([randomBytes(300 * 1024)]), { filename: "small.bin", method: "tus" });
    expect(again.size).toBe(300 * 1024);
    expect(forced.log.filter((line) => line.startsWith("PATCH"))).toHaveLength(1);
  });

  it("switches to tus when the service answers 413 REQUEST_TOO_LARGE to a multipart upload", async () => {
    // Limits that promise more than the service takes, as a proxy with a lower limit would.
    const { ff, log } = recordingClient(stack.edgeUrl, (path, body) => (path === "/v1/me" ? { ...(body as object), limits: { ...(body as { limits: object }).limits, max_request_body_bytes: 100 * MiB } } : body));
    const record = await ff.files.upload(big.path);
    expect(record.md5).toBe(big.md5);
    expect(log.indexOf("POST /api/upload/file")).toBeGreaterThanOrEqual(0);
    expect(log.indexOf("POST /api/upload/tus")).toBeGreaterThan(log.indexOf("POST /api/upload/file"));
  });

  it("refuses a file over max_upload_bytes with PAYLOAD_TOO_LARGE before sending it", async () => {
    const { ff, log } = recordingClient();
    const error = await ff.files.upload(new Blob([new Uint8Array(FILE_LIMIT + 1)]), { filename: "huge.bin" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FFedgeError);
    expect(error).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect(log).toEqual(["GET /v1/me"]);
  });

  it("resumes a tus upload after the connection drops mid-chunk, from the offset the service stored", async () => {
    const link = await flakyLink(stack.edgeUrl, 1.5 * MiB);
    try {
      const { ff, log } = recordingClient(link.url);
      const progress: number[] = [];
      const record = await ff.files.upload(big.path, { onProgress: ({ loaded }) => progress.push(loaded) });
      expect(record).toMatchObject({ size: 3 * MiB + 12_345, md5: big.md5 });
      expect(link.connections).toBeGreaterThanOrEqual(2);
      expect(log).toContain("HEAD /api/upload/tus/<id>");
      expect(progress.at(-1)).toBe(3 * MiB + 12_345);
    } finally {
      await link.stop();
    }
  });

  it("reports a path that does not exist as FILE_NOT_FOUND and a folder as FILE_UNREADABLE", async () => {
    const { ff, log } = recordingClient();
    await expect(ff.files.upload(join(dir, "nope.mp4"))).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    await expect(ff.files.upload(dir)).rejects.toMatchObject({ code: "FILE_UNREADABLE" });
    expect(log).toEqual([]);
  });
});
