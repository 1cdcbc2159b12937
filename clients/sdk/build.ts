import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";

/**
 * `npm run build:clients` (first half): dist/index.js, one ESM file for any runtime with its
 * dependencies (shlex) bundled so the package installs with none; dist/*.d.ts from tsc.
 */
const root = fileURLToPath(new URL(".", import.meta.url));
const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));

await rm(`${root}dist`, { recursive: true, force: true });
await build({
  entryPoints: [`${root}src/index.ts`],
  outfile: `${root}dist/index.js`,
  bundle: true,
  format: "esm",
  platform: "neutral",
  mainFields: ["module", "main"],
  target: "es2022",
  sourcemap: true,
  logLevel: "warning",
});
await promisify(execFile)(process.execPath, [tsc, "-p", `${root}tsconfig.json`, "--noEmit", "false", "--emitDeclarationOnly", "--outDir", `${root}dist`]);
console.log("clients/sdk/dist built");
