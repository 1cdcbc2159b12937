import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** Past this a file does more than one thing; split it by responsibility (house style 3). */
const MAX_LINES = 350;

/** Folders of hand-written product code: the Worker, the transcoder, what both share, the scripts and the clients' sources. */
const PRODUCT_FOLDERS = ["edge", "shared", "transcoder", "scripts", ...readdirSync(join(ROOT, "clients")).map((client) => `clients/${client}/src`)];

/** Folders a build or install fills, never edited by hand. */
const TOOL_FOLDERS = new Set(["node_modules", "dist", ".wrangler"]);

/** Files a tool writes, with the command that writes them: their length is the tool's business. */
const GENERATED: Readonly<Record<string, { by: string; committed: boolean }>> = {
  "edge/worker-configuration.d.ts": { by: "`wrangler types` (npm run types, also at install)", committed: false },
  "clients/sdk/src/openapi.ts": { by: "`npm run sdk:generate` (openapi-typescript)", committed: true },
  "edge/console/assets/console.bundle.js.txt": { by: "`npm run build:console` (esbuild), also before wrangler builds the Worker", committed: false },
};

function filesUnder(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return TOOL_FOLDERS.has(entry.name) ? [] : filesUnder(path);
    return [path];
  });
}

/** Lines as `wc -l` counts them, plus an unterminated last one. */
function lineCount(path: string): number {
  const text = readFileSync(join(ROOT, path), "utf8");
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

describe("product files", () => {
  const files = PRODUCT_FOLDERS.flatMap(filesUnder).filter((path) => !(path in GENERATED));

  it(`are at most ${MAX_LINES} lines each, generated files aside`, () => {
    expect(files.length).toBeGreaterThan(150);
    const tooLong = files.flatMap((path) => {
      const lines = lineCount(path);
      return lines > MAX_LINES ? [`${path}: ${lines} lines`] : [];
    });
    expect(tooLong).toEqual([]);
  });

  it("leave out only generated files that still exist, where they are committed", () => {
    const committed = Object.entries(GENERATED).filter(([, generated]) => generated.committed);
    expect(committed.map(([path]) => path).filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});
