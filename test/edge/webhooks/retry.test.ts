import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { config } from "../../../edge/lib/config";
import { MAX_DELIVERY_ATTEMPTS, RETRY_WINDOW_MS, retriesExhausted, retryDelaySeconds } from "../../../edge/webhooks/retry";

const schedule = config(env).webhookRetryScheduleSeconds;

describe("the webhook retry schedule", () => {
  it("defaults to 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, then every 8 h", () => {
    expect(schedule).toEqual([5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800]);
    expect([1, 2, 3, 9, 10, 20].map((attempt) => retryDelaySeconds(attempt, schedule, () => 0.5))).toEqual([5, 30, 120, 28_800, 28_800, 28_800]);
  });

  it("jitters each delay by at most 20 % either way", () => {
    expect(retryDelaySeconds(2, schedule, () => 0)).toBe(24);
    expect(retryDelaySeconds(2, schedule, () => 0.999_999)).toBe(36);
  });

  it("never waits more than 12 h between attempts, nor less than 1 s", () => {
    expect(retryDelaySeconds(1, [50_000], () => 0.999)).toBe(43_200);
    expect(retryDelaySeconds(1, [1], () => 0)).toBe(1);
  });

  it("keeps retrying for at least 24 h, within its bound on attempts, even with the shortest jitter", () => {
    let elapsed = 0;
    let attempt = 1;
    const start = Date.now();
    while (!retriesExhausted(new Date(start).toISOString(), attempt, start + elapsed)) {
      elapsed += retryDelaySeconds(attempt, schedule, () => 0) * 1000;
      attempt++;
    }
    expect(elapsed).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
    expect(attempt).toBeLessThan(MAX_DELIVERY_ATTEMPTS);
  });

  it("stops once 24 h have passed since the first attempt", () => {
    const first = new Date(Date.now() - RETRY_WINDOW_MS + 1000).toISOString();
    expect(retriesExhausted(first, 5)).toBe(false);
    expect(retriesExhausted(first, 5, Date.now() + 1000)).toBe(true);
    expect(retriesExhausted(new Date().toISOString(), MAX_DELIVERY_ATTEMPTS)).toBe(true);
  });
});
