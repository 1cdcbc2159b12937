import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack } from "../../scripts/lib/local-stack";
import { TEST_CLIP_COMMAND } from "../../scripts/start";

/**
 * The docs' shell examples, run as written against the real local stack, so that drift fails the
 * build. The convention (also at the top of README.md): every fenced `sh` block runs, in order, in
 * one bash session whose variables carry over; http://localhost:8787 becomes this stack's URL and
 * `ffe_...` a key of its own. HTML comments on the line above a fence mark the exceptions:
 * `readme-test: skip (reason)`, and `readme-test: output of the block above` on a `json` block that
 * the `sh` block before it must print exactly.
 */
const DOCS = ["README.md", "docs/uploads.md"];
const MARKER = /^<!--\s*readme-test:\s*(.*?)\s*-->$/;

interface Block {
  where: string;
  code: string;
  skip?: string;
  expected?: unknown;
}

function blocksOf(file: string): Block[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: Block[] = [];
  let previous: Block | undefined;
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const start = i;
    while (++i < lines.length && !lines[i]!.startsWith("```"));
    const code = lines.slice(start + 1, i).join("\n");
    const marker = MARKER.exec(lines[start - 1]?.trim() ?? "")?.[1];
    if (fence[1] === "sh") {
      previous = { where: `${file}:${start + 1}`, code, ...(marker?.startsWith("skip") ? { skip: marker } : {}) };
      blocks.push(previous);
    } else if (marker === "output of the block above") {
      if (!previous) throw new Error(`${file}:${start + 1}: an expected output with no sh block before it`);
      previous.expected = JSON.parse(code);
    } else if (marker) {
      throw new Error(`${file}:${start}: unknown readme-test marker '${marker}'`);
    }
  }
  return blocks;
}

const blocks = DOCS.flatMap(blocksOf);

/** What a block must also print, beyond exiting 0 without an error answer; keyed by a command it runs. */
const CHECKS: Array<[string, (output: string) => void]> = [
  ["/v1/me", (output) => expect(JSON.parse(output)).toHaveProperty("user_id")],
  ["/api/upload/url", (output) => expect(output.match(/"expires_at"/g)?.length).toBeGreaterThanOrEqual(3)],
  ["/events", (output) => expect(output).toMatch(/event: completed[\s\S]*"small\.mp4"[\s\S]*"audio\.mp3"/)],
  ["cdn-cgi/local/scheduled", (output) => expect(output.trim()).toBe("ok")],
  ["tail -c", (output) => expect(output).toMatch(/^upload-record: \{.*"md5"/im)],
  ["Idempotency-Key", (output) => {
    const ids = [...output.matchAll(/"task_id":"(tsk_\w+)"/g)].map((match) => match[1]);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]);
    expect(output).toMatch(/^idempotent-replayed: true/im);
  }],
  ["/api/files/", (output) => expect(output).toMatch(/^HTTP\/[\d.]+ 204/m)],
  ["ffedge run", (output) => expect(output).toMatch(/tsk_\w+/)],
  ['"name":"validate_command"', (output) => expect(output).toMatch(/"structuredContent":\{[^}]*"inputs"/)],
];

describe("the docs' shell examples", () => {
  let stack: Stack;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    stack = await Stack.start();
    ({ key } = await stack.createUser());
    dir = await mkdtemp(join(tmpdir(), "ffedge-readme-"));
    // The CLI section's `ffedge`, as `npm run install:cli` would put it on PATH.
    await mkdir(join(dir, "bin"));
    await run(process.execPath, ["node_modules/tsx/dist/cli.mjs", "clients/cli/build.ts", "--outdir", join(dir, "cli")]);
    await symlink(join(dir, "cli/ffedge.js"), join(dir, "bin/ffedge"));
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("finds the block each output check is for", () => {
    const running = blocks.filter((block) => block.skip === undefined);
    for (const [command] of CHECKS) expect(running.some((block) => block.code.includes(command)), command).toBe(true);
  });

  it("the banner of npm start offers the README's test clip", () => {
    expect(readFileSync("README.md", "utf8")).toContain(`\n${TEST_CLIP_COMMAND}\n`);
  });

  for (const block of blocks) {
    it.skipIf(block.skip !== undefined)(`${block.where} runs as written${block.skip ? ` (${block.skip})` : ""}`, async () => {
      const code = block.code.replaceAll("http://localhost:8787", stack.edgeUrl).replaceAll("ffe_...", key);
      const state = join(dir, "state.sh");
      const script = join(dir, "block.sh");
      // allexport: every variable a block sets reaches the next one through `export -p`.
      await writeFile(script, `set -a\n[ -f ${state} ] && . ${state}\nset -euo pipefail\ncd ${dir}\n${code}\nexport -p > ${state}\n`);
      const env = { ...process.env, PATH: `${join(dir, "bin")}:${process.env.PATH}` };
      const { stdout } = await run("bash", [script], { env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`${block.where} failed: ${error.message}\nstdout: ${error.stdout}\nstderr: ${error.stderr}`);
      });
      if (block.expected !== undefined) {
        expect(JSON.parse(stdout), `${block.where} prints the JSON the docs show`).toEqual(block.expected);
        return;
      }
      expect(stdout, `${block.where}: an HTTP error status`).not.toMatch(/HTTP\/[\d.]+ [45]\d\d/);
      expect(stdout, `${block.where}: a problem document`).not.toContain("ffedge.dev/problems/");
      for (const [command, check] of CHECKS) if (code.includes(command)) check(stdout);
    }, 150_000);
  }
});

const run = promisify(execFile);
