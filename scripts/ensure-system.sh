#!/usr/bin/env bash
# What the local stack needs from the operating system, beyond npm packages: ffmpeg/ffprobe
# (the transcoder runs them), util-linux's unshare/setpriv/prlimit (its sandbox) and, for the
# browser tests only, Chromium. Run by `npm install` (postinstall), `npm start` and `npm test`.
#
#   scripts/ensure-system.sh [--for start|test] [--soft]
#
# Missing packages are installed from Debian's archive when we are root and apt-get exists;
# otherwise one line says exactly what to run and the exit status is 1 — except with --soft,
# which `npm install` uses so that installing npm packages never fails for this.
set -uo pipefail
purpose=start; soft=false
while [ $# -gt 0 ]; do
  case "$1" in
    --for) purpose=$2; shift 2 ;;
    --soft) soft=true; shift ;;
    *) echo "ensure-system: unknown argument $1" >&2; exit 2 ;;
  esac
done

missing=()
{ command -v ffmpeg && command -v ffprobe; } >/dev/null 2>&1 || missing+=(ffmpeg)
{ command -v unshare && command -v setpriv && command -v prlimit; } >/dev/null 2>&1 || missing+=(util-linux)
if [ "$purpose" = test ] && [ ! -x /usr/bin/chromium ]; then missing+=(chromium); fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ffedge: installing ${missing[*]} from Debian's packages (apt-get)…" >&2
  if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/tmp/ffedge-apt.log 2>&1; then
    exit 0
  fi
  echo "ffedge: apt-get could not install ${missing[*]} (log: /tmp/ffedge-apt.log)." >&2
fi
echo "ffedge: missing ${missing[*]}. Run: sudo apt-get install -y ${missing[*]}   (macOS: brew install ffmpeg)" >&2
$soft && exit 0
exit 1
