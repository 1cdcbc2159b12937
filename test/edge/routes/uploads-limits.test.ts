/**
 * Uploads stopped by a limit: a body past MAX_UPLOAD_BYTES (which streams that many bytes) and
 * an origin idle past the idle window (which waits it out). Seconds on purpose, so these run in
 * the "edge-slow" project, outside the inner loop.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../edge/index";
import { api, createUser, md5Hex, postJson } from "../helpers";
import { originUrl, storedFor, streamedMultipart } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { originPaths, patternBytes } from "../files/origin";

const LIMIT = Number(env.MAX_UPLOAD_BYTES);
const MiB = 1024 * 1024;

async function expectNothingStored(userId: string): Promise<void> {
  expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
}

describe("POST /api/upload/file past the limit", () => {
  it("answers 413 to a chunked body that grows past the limit, stops reading it and stores nothing", async () => {
    const { key, userId } = await createUser();
    const size = LIMIT + 40 * MiB;
    const upload = streamedMultipart(size);
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": upload.contentType }, body: upload.body });
    await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
    // The Worker gave up at the limit instead of draining the rest of the body.
    expect(upload.pulled()).toBeLessThan(size);
    await expectNothingStored(userId);
  }, 60_000);
});

describe("POST /api/upload/url past the limit", () => {
  it("answers 413 when a remote without Content-Length sends more than the limit, storing nothing", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url: originUrl(originPaths.chunked(LIMIT + MiB)) }), 413, "PAYLOAD_TOO_LARGE");
    await expectNothingStored(userId);
  }, 60_000);
});

/** POST /api/upload/url through the whole Worker with a one-second idle timeout. */
async function urlUploadWithIdleTimeout(apiKey: string, url: string): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request("http://localhost:8787/api/upload/url", {
    method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: JSON.stringify({ url }),
  }), { ...env, URL_UPLOAD_IDLE_TIMEOUT_SECONDS: "1" }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("POST /api/upload/url from a slow origin", () => {
  it("answers 504 UPLOAD_SOURCE_STALLED when the origin stops sending mid-body, storing nothing", async () => {
    const { key, userId } = await createUser();
    const body = await expectProblem(await urlUploadWithIdleTimeout(key, originUrl(originPaths.stall())), 504, "UPLOAD_SOURCE_STALLED");
    expect(body.detail).toMatch(/sent nothing for 1 s/);
    await expectNothingStored(userId);
  });

  it("answers 504 UPLOAD_SOURCE_STALLED when a trickling origin falls silent, storing nothing", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await urlUploadWithIdleTimeout(key, originUrl(originPaths.trickle(100, 50, 5))), 504, "UPLOAD_SOURCE_STALLED");
    await expectNothingStored(userId);
  });

  it("answers 504 URL_TIMEOUT when the origin never sends headers", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await urlUploadWithIdleTimeout(key, originUrl(originPaths.hang())), 504, "URL_TIMEOUT");
    await expectNothingStored(userId);
  });

  it("stores a slow but steady download that takes longer in all than the idle timeout", async () => {
    const { key } = await createUser();
    // 16 KiB, one KiB every 150 ms: about 2.4 s in all, never 1 s without bytes.
    const response = await urlUploadWithIdleTimeout(key, originUrl(originPaths.trickle(16, 150)));
    expect(response.status, await response.clone().text()).toBe(201);
    const record = await response.json<{ size: number; md5: string }>();
    expect(record).toMatchObject({ size: 16 * 1024, md5: await md5Hex(patternBytes(0, 16 * 1024)) });
  });
});
