#!/bin/sh
# rootfs.sh ROOT
#
# Assembles in ROOT (in the image's build stage, transcoder/Dockerfile) the whole file system the
# transcoder's container runs on, which the final stage copies onto an empty image: the
# programs that run, the shared libraries they load and nothing else. No package manager,
# compiler or shell beyond dash is in it.
# - node (stripped of its symbol tables, 18 MB), ffmpeg and ffprobe (built in the stage before);
# - the sandbox's programs (transcoder/sandbox/isolation.ts): mount and unshare for the job
#   root, prlimit, setpriv; setcap only for the final stage, which removes it after use;
# - dash as /bin/sh (job-root.sh, the entrypoint) and a few coreutils for the entrypoint and
#   for an operator's `docker exec`;
# - glibc's iconv modules (ffmpeg converts subtitles' character sets with iconv), the fonts and
#   fontconfig setup drawtext and libass use (DejaVu, as Debian's ffmpeg package brings), the
#   CA bundle, and the users: root, nobody (ffmpeg) and ffedge (the server).
# Every shared library is found with ldd and copied under its soname into the multiarch
# directory, which the job root mounts read-only with the rest of /usr.
set -eu
root=$1
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=/usr/lib/$multiarch

programs="/usr/local/bin/node /usr/bin/ffmpeg /usr/bin/ffprobe
  /usr/bin/dash /usr/bin/mount /usr/bin/unshare /usr/bin/prlimit /usr/bin/setpriv /usr/sbin/setcap
  /usr/bin/basename /usr/bin/cat /usr/bin/chgrp /usr/bin/chmod /usr/bin/chown /usr/bin/cp /usr/bin/date
  /usr/bin/df /usr/bin/du /usr/bin/env /usr/bin/head /usr/bin/id /usr/bin/ln /usr/bin/ls /usr/bin/mkdir
  /usr/bin/mktemp /usr/bin/mv /usr/bin/readlink /usr/bin/rm /usr/bin/sleep /usr/bin/stat /usr/bin/tail /usr/bin/touch
  /usr/bin/tr /usr/bin/uname /usr/bin/wc"

mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/local/bin" "$root$lib" "$root/usr/lib64" "$root/etc/ssl/certs" \
  "$root/usr/share" "$root/var/cache" "$root/app" "$root/run" "$root/work" "$root/root" "$root/tmp"
# Merged /usr, as Debian's: the job root recreates these links as they are.
for dir in bin sbin lib lib64; do ln -s "usr/$dir" "$root/$dir"; done
ln -s dash "$root/usr/bin/sh"

for program in $programs; do
  cp "$program" "$root$program"
  strip --strip-all "$root$program"
done

# The dynamic loader, where every program's ELF header names it, and each library under its soname.
loader=$(readlink -f /lib64/ld-linux-x86-64.so.2)
cp "$loader" "$root$lib/ld-linux-x86-64.so.2"
ln -s "../lib/$multiarch/ld-linux-x86-64.so.2" "$root/usr/lib64/ld-linux-x86-64.so.2"
for program in $programs; do ldd "$program"; done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u | while read -r library; do
  cp -L "$library" "$root$lib/${library##*/}"
  strip --strip-unneeded "$root$lib/${library##*/}"
done
cp -a "$lib/gconv" "$root$lib/gconv"

# ld.so.cache: each library is found at once, without probing every hwcaps directory.
: >"$root/etc/ld.so.conf"
ldconfig -X -r "$root"
rm -f "$root/etc/ld.so.conf" "$root/var/cache/ldconfig/aux-cache"
rmdir "$root/var/cache/ldconfig"

cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
cp -a /etc/fonts "$root/etc/fonts"
cp -a /usr/share/fontconfig "$root/usr/share/fontconfig"
# DejaVu only (fonts-dejavu-core). fontconfig's cache holds for a directory only while its
# mtime is the one cached (a stale cache makes every ffmpeg run rescan the fonts), so the
# directories get a fixed, whole-second time that copying between stages and image layers keeps.
find /usr/share/fonts -type d -exec touch -d @0 {} +
cp -a /usr/share/fonts "$root/usr/share/fonts"
fc-cache --system-only --really-force
cp -a /var/cache/fontconfig "$root/var/cache/fontconfig"
cp /usr/lib/os-release "$root/usr/lib/os-release"
ln -s ../usr/lib/os-release "$root/etc/os-release"

# The licences of what is copied: each Debian package's copyright file, and ffmpeg's own
# (GPL: it is built with x264 and x265) from the source tree named by FFMPEG_SOURCE.
mkdir -p "$root/usr/share/doc/ffmpeg"
cp "$FFMPEG_SOURCE/COPYING.GPLv2" "$FFMPEG_SOURCE/LICENSE.md" "$FFMPEG_SOURCE/debian/copyright" "$root/usr/share/doc/ffmpeg/"
find "$root/usr" -type f -printf '%f\n' | xargs dpkg -S 2>/dev/null | sed 's/: .*//; s/, /\n/g' | sed 's/:.*//' | sort -u | while read -r package; do
  [ -f "/usr/share/doc/$package/copyright" ] || continue
  mkdir -p "$root/usr/share/doc/$package"
  cp "/usr/share/doc/$package/copyright" "$root/usr/share/doc/$package/"
done

cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
ffedge:x:10001:10001:ffedge transcoder:/work:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
ffedge:x:10001:
EOF
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"

chmod 0700 "$root/root"
chmod 1777 "$root/tmp"
# The server's work space: ffedge's, and only traversable by others (each job folder is nobody's).
chown 10001:10001 "$root/work"
chmod 0711 "$root/work"
# setpriv's file capabilities (set in the final stage, transcoder/Dockerfile, which says why
# it is executable by all) let the server switch each ffmpeg to nobody.
chgrp 10001 "$root/usr/bin/setpriv"
chmod 0755 "$root/usr/bin/setpriv"
