#!/usr/bin/env bash
# `npm run test:container`: tasks through TranscoderContainer in the production topology
# (Docker, the image wrangler builds from transcoder/Dockerfile, `wrangler dev` with
# Containers; test/container/). Extra arguments go to vitest, e.g. --reporter=json.
set -euo pipefail
cd "$(dirname "$0")/.."
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false

# Docker: an ordinary engine is used as is (wrangler pulls what it needs). On a machine that
# reaches only Debian and npm, the team's set-up script prepares an engine, the base image and
# Cloudflare's sidecar; it runs here when we are root and Docker is not ready.
SETUP=${FFEDGE_CONTAINERS_SETUP:-../shared/containers/setup.sh}
if [ -f "$SETUP" ] && { ! docker info >/dev/null 2>&1 || [ -z "${MINIFLARE_CONTAINER_EGRESS_IMAGE:-}" ]; }; then
  if [ "$(id -u)" = 0 ]; then
    eval "$(bash "$SETUP" --wrangler-dev)"
  else
    echo "Docker is not prepared. Run as root: eval \"\$(bash $SETUP --wrangler-dev)\"" >&2
    exit 1
  fi
elif ! docker info >/dev/null 2>&1; then
  echo "Docker is not running: start the Docker engine (https://docs.docker.com/engine/install/), then run this again." >&2
  exit 1
fi

exec vitest run --config test/container/vitest.config.ts "$@"
