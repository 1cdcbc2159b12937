import script from "./assets/console.bundle.js.txt";
import stylesheet from "./assets/console.css";
import { favicon } from "./assets/favicon";

interface Asset {
  path: string;
  body: string;
  contentType: string;
}

const sources = [
  { name: "console", extension: "js", body: script, contentType: "text/javascript; charset=utf-8" },
  { name: "console", extension: "css", body: stylesheet, contentType: "text/css; charset=utf-8" },
  { name: "favicon", extension: "svg", body: favicon, contentType: "image/svg+xml" },
];

let built: Promise<Asset[]> | undefined;

/**
 * Each asset's URL carries a hash of its content, so it can be cached for a year
 * (`immutable`) and a new deploy is picked up at once.
 */
export function consoleAssets(): Promise<Asset[]> {
  built ??= Promise.all(
    sources.map(async (source) => {
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(source.body)));
      const hash = [...digest.slice(0, 6)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
      return { path: `/console/assets/${source.name}.${hash}.${source.extension}`, body: source.body, contentType: source.contentType };
    }),
  );
  return built;
}

export async function assetPaths(): Promise<{ script: string; stylesheet: string; icon: string }> {
  const [js, css, icon] = await consoleAssets();
  return { script: js!.path, stylesheet: css!.path, icon: icon!.path };
}
