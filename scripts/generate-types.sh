#!/usr/bin/env bash
# edge/worker-configuration.d.ts (the Worker's `Env` and workerd's runtime types) is generated
# from wrangler.toml by `wrangler types` and never committed. `npm install`, `npm start`,
# `npm test` and `npm run typecheck` run this, so the file follows every change to wrangler.toml;
# it is rewritten only when `--check` finds it stale, which keeps those runs cheap.
# https://developers.cloudflare.com/workers/languages/typescript/#generate-types
#
# `--env-file=/dev/null`: wrangler would otherwise add whatever a developer's .dev.vars holds;
# secrets are declared once, by hand, in edge/secrets.d.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS="${WRANGLER_SEND_METRICS:-false}"
args=(edge/worker-configuration.d.ts --strict-vars=false --env-file=/dev/null)
wrangler types "${args[@]}" --check >/dev/null 2>&1 && exit 0
wrangler types "${args[@]}" >/dev/null
