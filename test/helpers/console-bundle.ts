import { buildConsoleClient } from "../../scripts/build-console";

/**
 * The Worker imports the console's bundled client (edge/console/assets.ts), which wrangler.toml's
 * [build] generates; the workerd test pool reads wrangler.toml but never runs [build].
 */
export default async function setup(): Promise<void> {
  await buildConsoleClient();
}
