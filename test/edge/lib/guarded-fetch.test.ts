import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { guardedFetch } from "../../../edge/lib/guarded-fetch";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";

/** The Worker's env as deployed: no development allow-list applies. */
const production: Env = { ...env, ENVIRONMENT: "production", DEV_FETCH_ALLOW_HOSTS: "127.0.0.1,localhost" };

async function failure(promise: Promise<unknown>): Promise<{ code: string; status: number }> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(AppError);
  return { code: (error as AppError).code, status: (error as AppError).status };
}

describe("guardedFetch in production", () => {
  it.each([
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.0x0.0x0.0x1/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://127.0.1/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::1]/",
    "http://localhost/",
  ])("refuses loopback written as %s, ignoring the development allow-list", async (url) => {
    expect(await failure(guardedFetch(production, url))).toEqual({ code: "URL_HOST_BLOCKED", status: 400 });
  });

  it("refuses a non-default port even on an allow-listed host", async () => {
    expect(await failure(guardedFetch(production, originUrl(originPaths.file(10))))).toEqual({ code: "URL_NOT_ALLOWED", status: 400 });
  });
});

describe("guardedFetch in development", () => {
  it("reaches an allow-listed host on any port", async () => {
    const { response, url } = await guardedFetch(env, originUrl(originPaths.file(10)));
    expect(response.status).toBe(200);
    expect(url.pathname).toBe("/file/10");
    expect((await response.arrayBuffer()).byteLength).toBe(10);
  });

  it("checks every redirect hop and reports the final URL", async () => {
    const target = originUrl(originPaths.file(10));
    const { response, url } = await guardedFetch(env, originUrl(originPaths.redirect(originPaths.file(10))));
    expect(response.status).toBe(200);
    expect(url.toString()).toBe(target);
    await response.body?.cancel();
  });

  it("answers URL_TIMEOUT (504) when the remote never sends headers", async () => {
    expect(await failure(guardedFetch(env, originUrl(originPaths.hang()), { timeoutMs: 300 }))).toEqual({ code: "URL_TIMEOUT", status: 504 });
  });

  it("cuts off a body that stalls past the deadline", async () => {
    const { response } = await guardedFetch(env, originUrl(originPaths.stall()), { timeoutMs: 300 });
    expect(response.status).toBe(200);
    const error = await response.arrayBuffer().then(() => undefined, (reason: unknown) => reason);
    expect((error as Error).name).toBe("TimeoutError");
  });
});
