import { describe, expect, it } from "vitest";
import { backoff, retry } from "../../../transcoder/lib/retry";

describe("retry", () => {
  it("tries again after a retryable failure and returns the first success", async () => {
    const seen: number[] = [];
    const result = await retry(
      async (attempt) => {
        seen.push(attempt);
        if (attempt < 3) throw new Error("not yet");
        return "done";
      },
      { retryable: () => true, delayMs: () => 1 },
    );
    expect(result).toBe("done");
    expect(seen).toEqual([1, 2, 3]);
  });

  it("throws a failure that is not retryable at once", async () => {
    let tries = 0;
    await expect(retry(async () => Promise.reject(new Error(`no ${++tries}`)), { retryable: () => false, delayMs: () => 1 })).rejects.toThrow("no 1");
    expect(tries).toBe(1);
  });

  it("gives up with the last failure when the delay says so", async () => {
    let tries = 0;
    await expect(retry(async () => Promise.reject(new Error(`no ${++tries}`)), { retryable: () => true, delayMs: (attempt) => (attempt < 2 ? 1 : 0) })).rejects.toThrow("no 2");
  });

  it("starts the next try at once when woken", async () => {
    const wake = new AbortController();
    const started = Date.now();
    let tries = 0;
    const done = retry(
      async () => {
        if (++tries === 1) throw new Error("first");
        return tries;
      },
      { retryable: () => true, delayMs: () => 60_000, wake: () => wake.signal },
    );
    setTimeout(() => wake.abort(), 10);
    expect(await done).toBe(2);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe("backoff", () => {
  it("doubles from the base up to the cap, without jitter when asked", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoff(attempt, 100, 1000, false))).toEqual([100, 200, 400, 800, 1000]);
  });

  it("stays within ±20 % with jitter", () => {
    for (let i = 0; i < 100; i++) {
      const delay = backoff(2, 100, 1000);
      expect(delay).toBeGreaterThanOrEqual(160);
      expect(delay).toBeLessThanOrEqual(240);
    }
  });
});
