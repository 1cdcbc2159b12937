#!/bin/sh
# job-root.sh SKELETON FSTAB JOB_DIR WORK_DIR PROGRAM [ARGS...]
#
# Run by `unshare --mount --propagation private`: in this process tree's own mount namespace,
# mounts into SKELETON (made by the server at boot, see isolation.ts) the host's system files
# read-only, as FSTAB lists them, and the job's folder at /job, then chroots there and execs
# PROGRAM in WORK_DIR. Nothing outside the job folder exists for PROGRAM; nothing is mounted on
# the host. Every argument comes from the server, never from a user's command, and each is used
# quoted.
set -eu
root=$1 fstab=$2 job=$3 wd=$4
shift 4

# One process for every system mount (each `mount` run is a fork and exec of its own).
mount --fstab "$fstab" --all
mount --bind -o nosuid,nodev "$job" "$root/job"

# The programs after this one (prlimit, setpriv) drop every privilege, so chroot is enough:
# without CAP_SYS_CHROOT there is no way back out.
# The server spawns this with an empty environment, to which the shell added only PWD: without
# it the program gets an empty environment, as without a job root (and no `env -i` to exec).
unset PWD
exec /usr/bin/unshare --root="$root" --wd="$wd" -- "$@"
