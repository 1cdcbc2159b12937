#!/bin/sh
# job-root.sh SKELETON JOB_DIR WORK_DIR PROGRAM [ARGS...]
#
# Run by `unshare --mount --propagation private`: in this process tree's own mount namespace,
# bind-mounts into SKELETON (made by the server at boot, see isolation.ts) the host's system
# files read-only and the job's folder at /job, then chroots there and execs PROGRAM in
# WORK_DIR. Nothing outside the job folder exists for PROGRAM; nothing is mounted on the host.
# Every argument comes from the server, never from a user's command, and each is used quoted.
set -eu
root=$1 job=$2 wd=$3
shift 3

for path in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc/ld.so.cache /etc/alternatives /etc/fonts /var/cache/fontconfig; do
  # The skeleton has a mount point for each of these that this host has; symlinks are copies.
  if [ -e "$root$path" ] && [ ! -L "$root$path" ]; then
    mount --bind -o ro,nosuid,nodev "$path" "$root$path"
  fi
done
for device in /dev/null /dev/urandom; do
  if [ -e "$root$device" ]; then
    mount --bind "$device" "$root$device"
  fi
done
mount --bind -o nosuid,nodev "$job" "$root/job"

# The programs after this one (prlimit, setpriv) drop every privilege, so chroot is enough:
# without CAP_SYS_CHROOT there is no way back out.
# env -i: the shell exported PWD; the program gets an empty environment, as without a job root.
exec /usr/bin/env -i /usr/bin/unshare --root="$root" --wd="$wd" -- "$@"
