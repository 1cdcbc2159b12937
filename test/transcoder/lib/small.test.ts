import { describe, expect, it } from "vitest";
import { bearerMatches } from "../../../transcoder/lib/bearer";
import { RecentIds } from "../../../transcoder/lib/recent-ids";

describe("bearerMatches", () => {
  it.each([
    ["Bearer secret", true],
    ["Bearer secre", false],
    ["Bearer secrets", false],
    ["bearer secret", true],
    ["secret", false],
    ["Bearer  secret", true],
    ["Bearer secret x", false],
    ["Bearer ", false],
    [undefined, false],
  ])("%j → %s", (header, expected) => expect(bearerMatches(header, "secret")).toBe(expected));
});

describe("RecentIds", () => {
  it("forgets the oldest ids beyond its size", () => {
    const ids = new RecentIds(2, 60_000);
    ids.add("a");
    ids.add("b");
    ids.add("c");
    expect([ids.has("a"), ids.has("b"), ids.has("c")]).toEqual([false, true, true]);
  });

  it("forgets ids older than its age", () => {
    let now = 0;
    const ids = new RecentIds(10, 1000, () => now);
    ids.add("a");
    now = 500;
    ids.add("b");
    now = 1200;
    expect([ids.has("a"), ids.has("b")]).toEqual([false, true]);
    expect(ids.size).toBe(1);
  });
});
