#!/bin/sh
# transcoder-entrypoint COMMAND [ARGS...]
#
# The image's entrypoint (transcoder/Dockerfile). The container starts as root for one thing:
# the CA that signs the platform's interception of the container's HTTPS, which the server must
# trust (NODE_EXTRA_CA_CERTS, edge/dispatch/transcoder-container.ts), is placed by the platform
# at start, and nothing documents that the unprivileged user can read it
# (https://developers.cloudflare.com/containers/platform-details/outbound-traffic/). When
# `ffedge` cannot, a readable copy is made and named instead. The platform creates the file
# "once your container starts", so under EGRESS=container (where the server refuses to start
# without it) it is waited for, up to 10 s. Then it becomes `ffedge` for good and execs
# COMMAND, which becomes PID 1 and receives the platform's SIGTERM itself. The bounding set is
# kept: the server's setpriv needs its file capabilities to run each ffmpeg as nobody.
# Started as any other user (`docker run --user`), it execs COMMAND unchanged.
set -eu

if [ "$(id -u)" -ne 0 ]; then
  exec "$@"
fi

# Every capability a process can hold is gone once it is ffedge: root's permitted and effective
# sets are cleared by the kernel on the switch, and --inh-caps clears the inheritable one.
become_ffedge="setpriv --reuid=ffedge --regid=ffedge --init-groups --inh-caps=-all"

ca=${NODE_EXTRA_CA_CERTS:-}
if [ -n "$ca" ] && [ "${EGRESS:-}" = container ]; then
  tries=100
  while [ ! -e "$ca" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
fi
if [ -n "$ca" ] && [ -f "$ca" ] && ! $become_ffedge /bin/sh -c '[ -r "$0" ]' "$ca"; then
  copy=/run/ffedge/${ca##*/}
  (umask 022 && mkdir -p /run/ffedge && cat "$ca" >"$copy")
  echo "transcoder-entrypoint: $ca is not readable by ffedge; NODE_EXTRA_CA_CERTS names a readable copy, $copy" >&2
  export NODE_EXTRA_CA_CERTS="$copy"
fi

export HOME=/work USER=ffedge LOGNAME=ffedge
exec $become_ffedge -- "$@"
