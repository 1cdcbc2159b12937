/**
 * The console's browser client (edge/console/client/, TypeScript split by page) as the one
 * module the Worker serves: esbuild bundles it into edge/console/assets/console.bundle.js.txt,
 * which wrangler ships as a text module (edge/console/assets.ts gives it a content-hashed URL).
 * The file is generated, never committed.
 *
 * Runs from wrangler.toml's [build] (`npm start`, which rebuilds on every change under
 * edge/console/client/, `wrangler types` and so `npm install`, the e2e stacks, `npm run deploy`)
 * and from vitest's global setup, as the workerd test pool never runs [build].
 * `npm run build:console` runs it by hand.
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRY = join(ROOT, "edge/console/client/main.ts");
export const BUNDLE = join(ROOT, "edge/console/assets/console.bundle.js.txt");

/**
 * Bundles the client; writes the file only when its content changed, through a rename, so that
 * builds running side by side (parallel test stacks) never expose half a file and wrangler's
 * watcher sees no change when there is none. Returns whether the file was written.
 */
export async function buildConsoleClient(): Promise<boolean> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: "esm",
    // The browsers the console supports: the last two years of Chrome, Firefox and Safari.
    target: ["chrome111", "firefox111", "safari16.4"],
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const text = result.outputFiles[0]!.text;
  const current = await readFile(BUNDLE, "utf8").catch(() => null);
  if (current === text) return false;
  const temporary = `${BUNDLE}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, BUNDLE);
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await buildConsoleClient();
}
