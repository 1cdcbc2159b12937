import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack } from "../../scripts/lib/local-stack";

const MiB = 1024 * 1024;
const LIMIT = 8 * MiB;

let stack: Stack;
let key: string;

beforeAll(async () => {
  stack = await Stack.start({ edgeVars: { MAX_UPLOAD_BYTES: String(LIMIT) } });
  ({ key } = await stack.createUser());
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/**
 * A multipart upload that declares `declared` bytes and keeps sending them, as curl does with a
 * file over the limit. Resolves with the status the client saw, or the error that ended it.
 */
function oversizedUpload(declared: number): Promise<{ status?: number; contentType?: string; body?: string; error?: string; sent: number }> {
  const chunk = Buffer.alloc(64 * 1024, 7);
  let sent = 0;
  return new Promise((resolve) => {
    const url = new URL(stack.edgeUrl);
    const boundary = "----ffedge-oversized";
    const outgoing = request({
      host: url.hostname, port: url.port, path: "/api/upload/file", method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(declared) },
    }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => {
        resolve({ status: response.statusCode, contentType: response.headers["content-type"], body, sent });
        outgoing.destroy();
      });
    });
    outgoing.on("error", (error) => resolve({ error: error.message, sent }));
    outgoing.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\nContent-Type: video/mp4\r\n\r\n`);
    const pump = () => {
      while (sent < declared && !outgoing.destroyed) {
        sent += chunk.byteLength;
        if (!outgoing.write(chunk)) return void outgoing.once("drain", pump);
      }
      outgoing.end();
    };
    pump();
  });
}

async function smallUpload(): Promise<Response> {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(4096).fill(7)], { type: "video/mp4" }), "small.mp4");
  return stack.fetch("/api/upload/file", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
}

describe("a refused oversized upload on the local stack (wrangler dev)", () => {
  it("ends at once instead of being drained, and the next upload is answered normally, never with the dev proxy's plain-text 503", async () => {
    const declared = 64 * LIMIT;
    const refused = await oversizedUpload(declared);
    // The 413 is sent and the rest of the body refused: the client sees the 413, or (still
    // writing when the connection closes) a reset, long before it has sent the 512 MiB it
    // declared — the body is not drained first.
    // Locally one more ending is possible: wrangler dev's proxy, still forwarding the body when
    // the Worker cancels it, sometimes answers its own plain "Network connection lost" 500
    // (about one run in eight here). That proxy does not exist on Cloudflare; what matters is
    // that the body is not drained and that the connection after it is served normally.
    expect(refused.sent).toBeLessThan(declared / 2);
    if (refused.status === 413) expect(refused.contentType).toBe("application/problem+json");
    else if (refused.status !== undefined) expect(refused).toMatchObject({ status: 500, body: expect.stringContaining("Network connection lost") });
    else expect(refused.error).toMatch(/ECONNRESET|EPIPE|socket hang up/);

    for (let i = 0; i < 3; i++) {
      const next = await smallUpload();
      const text = await next.text();
      expect(next.status, text).toBe(201);
      expect(text).not.toContain("restarted mid-request");
    }
  }, 60_000);
});
