import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { enforceRateLimit } from "../../../edge/lib/rate-limit";
import { api, createUser } from "../helpers";

// Up to three 10 s windows of requests: the burst may straddle a window boundary.
describe("per-key rate limit", { timeout: 45_000 }, () => {
  it("answers 429 with Retry-After and RateLimit headers past the limit, per key", async () => {
    const alice = await createUser();
    const bob = await createUser();
    let limited: Response | undefined;
    // Windows are fixed: if the burst straddles a window boundary, the next window still fills up.
    for (let i = 0; i < 3 * 200 + 1 && !limited; i++) {
      const response = await api("/v1/me", alice.key);
      if (response.status === 429) limited = response;
      else expect(response.headers.get("ratelimit-policy")).toBe("200;w=10");
    }
    expect(limited).toBeDefined();
    expect(limited!.headers.get("content-type")).toBe("application/problem+json");
    expect((await limited!.json<{ code: string }>()).code).toBe("RATE_LIMITED");
    const retryAfter = Number(limited!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(limited!.headers.get("ratelimit-remaining")).toBe("0");
    expect(limited!.headers.get("ratelimit-limit")).toBe("200");
    expect((await api("/v1/me", bob.key)).status).toBe(200);
  });
});

describe("a failing rate limiter", () => {
  // The binding's own store failing (locally: SQLITE_FULL on a full disk) cannot be caused
  // inside the test pool; a binding that throws stands in for it.
  it("lets the request through (fails open) rather than answering 500", async () => {
    const failing = { ...env, API_RATE_LIMIT: { limit: async () => Promise.reject(new Error("D1_ERROR: database or disk is full: SQLITE_FULL")) } } as Env;
    const headers = await enforceRateLimit(failing, "some-key-hash");
    expect(headers["RateLimit-Policy"]).toBe("200;w=10");
  });
});
