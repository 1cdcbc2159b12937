import { chmod, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * `npm run build:clients` (second half): dist/ffedge.js, one executable ESM file with the SDK,
 * commander and cli-progress inside, so the packed tarball installs with no dependencies.
 * commander and cli-progress are CommonJS and require Node's built-ins; an ESM bundle has no
 * `require`, so the banner makes one (https://esbuild.github.io/api/#platform).
 */
const root = fileURLToPath(new URL(".", import.meta.url));
// `--outdir DIR` builds elsewhere, so a test can build its own copy while another packs dist/.
const outdirFlag = process.argv.indexOf("--outdir");
const outdir = outdirFlag > 0 ? process.argv[outdirFlag + 1]! : `${root}dist`;
const outfile = `${outdir}/ffedge.js`;

await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: [`${root}src/main.ts`],
  outfile,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  banner: { js: '#!/usr/bin/env node\nimport { createRequire as __ffedgeCreateRequire } from "node:module";\nconst require = __ffedgeCreateRequire(import.meta.url);' },
  legalComments: "eof",
  logLevel: "warning",
});
await chmod(outfile, 0o755);
console.log(`${outfile} built`);
