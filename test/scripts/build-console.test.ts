import { readFile, stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { BUNDLE, buildConsoleClient } from "../../scripts/build-console";

describe("the console's bundle", () => {
  it("is left untouched by a build that changes nothing, so wrangler dev does not reload for it", async () => {
    await buildConsoleClient();
    const before = await stat(BUNDLE);
    expect(await buildConsoleClient()).toBe(false);
    expect((await stat(BUNDLE)).mtimeMs).toBe(before.mtimeMs);
  });

  it("runs under the console's CSP, which refuses eval and the Function constructor", async () => {
    await buildConsoleClient();
    const script = await readFile(BUNDLE, "utf8");
    expect(script).toContain('"/console/api"');
    expect(script).not.toMatch(/\beval\(|\bnew Function\(/);
  });
});
