import { copyFile } from "node:fs/promises";
import { build } from "esbuild";

/**
 * The transcoder as its container runs it: one JavaScript module holding the server and every
 * dependency it imports, so the image needs neither TypeScript tooling nor node_modules.
 * Runs on Node 24 without a loader (type stripping): `npm run build:transcoder`.
 */
await build({
  entryPoints: ["transcoder/server.ts"],
  outfile: "dist/transcoder/server.mjs",
  bundle: true,
  platform: "node",
  target: "node24",
  format: "esm",
  sourcemap: true,
  legalComments: "none",
  logLevel: "warning",
  // Bundled CommonJS dependencies (Fastify, pino) require() Node's built-ins, which an ES module does not define.
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
});
// The sandbox runs this script beside its module (isolation.ts resolves it from import.meta.url).
await copyFile("transcoder/sandbox/job-root.sh", "dist/transcoder/job-root.sh");
