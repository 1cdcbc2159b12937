import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const toml = readFileSync("wrangler.toml", "utf8");
const [local = "", production = ""] = toml.split(/^\[env\.production\]$/m);

describe("wrangler.toml", () => {
  it("advertises the rate limit the binding enforces, locally and in production", () => {
    for (const section of [local, production]) {
      const binding = /simple = \{ limit = (\d+), period = (\d+) \}/.exec(section);
      expect(binding).not.toBeNull();
      expect(/RATE_LIMIT_REQUESTS = "(\d+)"/.exec(section)?.[1]).toBe(binding![1]);
      expect(/RATE_LIMIT_PERIOD_SECONDS = "(\d+)"/.exec(section)?.[1]).toBe(binding![2]);
    }
  });

  it("never lets production reach private hosts or run as development", () => {
    expect(production).not.toContain("DEV_FETCH_ALLOW_HOSTS");
    expect(production).toContain('ENVIRONMENT = "production"');
  });

  it("gives the rate limiter a namespace of its own, the same locally and in production", () => {
    const ids = [local, production].map((section) => /namespace_id = "(\d+)"/.exec(section)?.[1]);
    expect(ids[0]).toBeDefined();
    expect(ids[0]).not.toBe("1001");
    expect(ids[1]).toBe(ids[0]);
  });

  it("declares no dead-letter queue or retry count the acknowledging consumer would never use", () => {
    expect(toml).not.toMatch(/^[^#\n]*(dead_letter_queue|max_retries)/m);
  });

  it("keeps the production Worker's logs (Workers Logs)", () => {
    expect(production).toMatch(/^observability = \{ enabled = true, head_sampling_rate = (0?\.\d+|1) \}$/m);
  });

  it("does not wait for queue batches to fill locally", () => {
    const consumers = local.match(/\[\[queues\.consumers\]\][^[]*/g) ?? [];
    expect(consumers.length).toBeGreaterThanOrEqual(1);
    for (const consumer of consumers) expect(consumer).toContain("max_batch_timeout = 0");
  });
});
