import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const CRUISER = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");
const CRUISER_CONFIG = join(import.meta.dirname, "dependency-cruiser.cjs");
const KNIP = join(ROOT, "node_modules/knip/bin/knip.js");
const SOURCES = ["edge", "shared", "transcoder", "scripts", "bench", "clients", "test"];
const TIMEOUT_MS = 180_000;

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

/** Runs a Node CLI of the tree with the same Node as the tests; a non-zero exit is a result, not an error. */
async function node(args: string[], cwd: string): Promise<{ code: number; output: string; stdout: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr, stdout };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : 1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}`, stdout: failed.stdout ?? "" };
  }
}

async function violations(cwd: string, sources: string[]): Promise<Violation[]> {
  const result = await node([CRUISER, "--config", CRUISER_CONFIG, "--output-type", "json", ...sources], cwd);
  const report = JSON.parse(result.stdout) as { summary: { violations: Violation[] } };
  return report.summary.violations;
}

/** The tree's graph is cruised once for all the checks below. */
let cruised: Promise<Violation[]> | undefined;
const treeViolations = () => (cruised ??= violations(ROOT, SOURCES));

const FRAMEWORK_RULES = new Set(["shared-is-framework-free", "transcoder-never-loads-hono", "edge-never-loads-fastify"]);
const LAYER_RULES = new Set(["lib-imports-no-domain", "domain-imports-no-routes"]);

function describeViolation(violation: Violation): string {
  return violation.cycle ? [violation.from, ...violation.cycle.map((step) => step.name)].join(" → ") : `${violation.from} → ${violation.to}`;
}

describe("the import graph", () => {
  it("has no import cycles", { timeout: TIMEOUT_MS }, async () => {
    const cycles = (await treeViolations()).filter((v) => v.rule.name === "no-circular");
    expect(cycles.map(describeViolation)).toEqual([]);
  });

  it("keeps web frameworks out of shared/, Hono out of the transcoder and Fastify out of the Worker", { timeout: TIMEOUT_MS }, async () => {
    const leaks = (await treeViolations()).filter((v) => FRAMEWORK_RULES.has(v.rule.name));
    expect(leaks.map((v) => `${v.rule.name}: ${describeViolation(v)}`)).toEqual([]);
  });

  it("points the Worker's layers one way: edge/lib imports no domain or route module, the domain imports no route module", { timeout: TIMEOUT_MS }, async () => {
    const upward = (await treeViolations()).filter((v) => LAYER_RULES.has(v.rule.name));
    expect(upward.map((v) => `${v.rule.name}: ${describeViolation(v)}`)).toEqual([]);
  });

  it("breaks no rule of the configuration that the checks above leave out", { timeout: TIMEOUT_MS }, async () => {
    const unchecked = (await treeViolations()).filter((v) => v.rule.name !== "no-circular" && !FRAMEWORK_RULES.has(v.rule.name) && !LAYER_RULES.has(v.rule.name));
    expect(unchecked.map((v) => `${v.rule.name}: ${describeViolation(v)}`)).toEqual([]);
  });

  it("reports a cycle, each framework leak and each upward import, so the checks above can fail", { timeout: TIMEOUT_MS }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "ffedge-structure-"));
    try {
      const files: Record<string, string> = {
        "edge/a.ts": 'import { b } from "./b";\nexport const a = () => b;\n',
        "edge/b.ts": 'import type { a } from "./a";\nexport const b: typeof a | undefined = undefined;\n',
        "shared/errors.ts": 'import { z } from "@hono/zod-openapi";\nexport const schema = z.string();\n',
        "transcoder/app.ts": 'import { schema } from "../shared/errors";\nexport const app = schema;\n',
        "edge/server.ts": 'import fastify from "fastify";\nexport const server = fastify;\n',
        "edge/routes/internal.ts": "export const internal = 1;\n",
        "edge/routes/tasks.ts": "export const tasks = 1;\n",
        "edge/tasks/state.ts": "export const state = 1;\n",
        "edge/tasks/present.ts": 'import { tasks } from "../routes/tasks";\nexport const present = tasks;\n',
        "edge/lib/config.ts": 'import { present } from "../tasks/present";\nexport const config = present;\n',
        // No exception: lib imports no domain module, the domain no route module.
        "edge/lib/stubs.ts": 'import { state } from "../tasks/state";\nimport { present } from "../tasks/present";\nexport const stubs = [state, present];\n',
        "edge/dispatch/transcoder-container.ts": 'import { internal } from "../routes/internal";\nimport { tasks } from "../routes/tasks";\nexport const container = [internal, tasks];\n',
      };
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), text);
      }
      const found = await violations(dir, ["edge", "shared", "transcoder"]);
      expect([...new Set(found.map((v) => v.rule.name))].sort()).toEqual([
        "domain-imports-no-routes",
        "edge-never-loads-fastify",
        "lib-imports-no-domain",
        "no-circular",
        "shared-is-framework-free",
        "transcoder-never-loads-hono",
      ]);
      expect(found.filter((v) => LAYER_RULES.has(v.rule.name)).map(describeViolation).sort()).toEqual([
        "edge/dispatch/transcoder-container.ts → edge/routes/internal.ts",
        "edge/dispatch/transcoder-container.ts → edge/routes/tasks.ts",
        "edge/lib/config.ts → edge/tasks/present.ts",
        "edge/lib/stubs.ts → edge/tasks/present.ts",
        "edge/lib/stubs.ts → edge/tasks/state.ts",
        "edge/tasks/present.ts → edge/routes/tasks.ts",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("dead code", () => {
  it("has no unused files, exports or exported types", { timeout: TIMEOUT_MS }, async () => {
    const result = await node([KNIP, "--config", "test/structure/knip.json", "--include", "files,exports,types", "--no-progress"], ROOT);
    expect(result.code, result.output).toBe(0);
  });
});
