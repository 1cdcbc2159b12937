import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";
import { ROOT, applyLocalMigrations, createKey } from "../../scripts/keys";

export interface Stack {
  /** Origin of the production Worker (edge/index.ts with wrangler.toml). */
  edgeUrl: string;
  /** Origin of the bench-only baseline Worker: PUT /<key> pipes the body into R2.put. */
  baselineUrl: string;
  apiKey: string;
  stop: () => Promise<void>;
}

const dev = (persist: string) => ({ persist, server: { hostname: "127.0.0.1", port: 0 }, inspector: false as const, watch: false, logLevel: "warn" as const, enableContainers: false });

/**
 * The local stack in this process, as `wrangler dev` runs it, plus the baseline Worker bound to
 * the same local R2 (both persist to one directory). The baseline is a separate script so no
 * bench-only route ever ships in the production Worker.
 */
export async function startStack(): Promise<Stack> {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  process.env.WRANGLER_SEND_METRICS = "false";
  const persist = await mkdtemp(join(tmpdir(), "ffedge-bench-"));
  await applyLocalMigrations(persist);
  const { key } = await createKey({ remote: false, persistTo: persist }, "bench");

  const edge = await unstable_startWorker({
    config: join(ROOT, "wrangler.toml"),
    bindings: {
      SIGNING_SECRET: { type: "plain_text", value: "bench-signing-secret" },
      TRANSCODER_SECRET: { type: "plain_text", value: "bench-transcoder-secret" },
      DEV_FETCH_ALLOW_HOSTS: { type: "plain_text", value: "127.0.0.1" },
    },
    // The API, unlike `wrangler dev`, does not derive this from compatibility_flags; "v2" is what
    // nodejs_compat means at our compatibility date.
    build: { nodejsCompatMode: "v2" },
    dev: dev(persist),
  });
  const baseline = await unstable_startWorker({ config: join(ROOT, "bench/lib/baseline-wrangler.toml"), dev: dev(persist) });
  await Promise.all([edge.ready, baseline.ready]);
  const [edgeUrl, baselineUrl] = await Promise.all([edge.url, baseline.url]);
  return {
    edgeUrl: edgeUrl.origin,
    baselineUrl: baselineUrl.origin,
    apiKey: key,
    stop: async () => {
      await Promise.all([edge.dispose(), baseline.dispose()]);
      await rm(persist, { recursive: true, force: true });
    },
  };
}
