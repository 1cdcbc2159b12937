import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const TSC = resolve(ROOT, "node_modules/typescript/bin/tsc");

// Every tsconfig of the tree: the clients' packages ship .d.ts built from theirs, so a type
// error there is a broken release, not a style nit. The console's browser client has its own
// (the DOM's types, not workerd's).
const PROJECTS = ["tsconfig.json", "edge/tsconfig.json", "edge/console/client/tsconfig.json", "clients/sdk/tsconfig.json", "clients/sdk/tsconfig.test.json", "clients/cli/tsconfig.json"];

describe("the type checker", () => {
  it.each(PROJECTS)("finds no error in %s", { timeout: 240_000 }, async (project) => {
    const result = await run(process.execPath, [TSC, "--noEmit", "-p", project], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).then(
      () => "",
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    expect(result).toBe("");
  });
});
