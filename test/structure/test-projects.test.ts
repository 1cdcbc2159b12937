import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { EDGE_IN_NODE, INTEGRATION_TESTS, SLOW_EDGE_TESTS, SLOW_NODE_TESTS } from "../../vitest.config";

const ROOT = resolve(import.meta.dirname, "../..");

/** `a/{b,c}.ts` → `a/b.ts`, `a/c.ts`; a `**` pattern stands for its folder. */
function namedPaths(pattern: string): string[] {
  if (pattern.includes("**")) return [pattern.slice(0, pattern.indexOf("/**"))];
  const braces = /\{([^}]*)\}/.exec(pattern);
  if (!braces) return [pattern];
  return braces[1]!.split(",").flatMap((choice) => namedPaths(pattern.replace(braces[0], choice)));
}

describe("the lists of vitest.config.ts that keep tests out of the inner loop", () => {
  // A file moved or renamed without its entry would silently run in `npm run test:unit`.
  it("name only files and folders that exist", () => {
    const named = [...SLOW_EDGE_TESTS, ...SLOW_NODE_TESTS, ...INTEGRATION_TESTS, ...EDGE_IN_NODE].flatMap(namedPaths);
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});
