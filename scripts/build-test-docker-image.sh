#!/usr/bin/env bash
# Builds the container image the docker node tests use, without a registry: a rootfs made from Debian's
# busybox-static (fetched with `apt-get download`, unpacked with `dpkg -x`, nothing installed), imported into the
# local dockerd with `docker import` and tagged `patchbay-busybox:<busybox version>-<recipe>` and `patchbay-busybox:latest`.
# A second run with the same busybox and the same script finds the tag and does nothing. Prints the image name.
#
# The rootfs: /bin/busybox with a link per applet in /bin, /etc/passwd and /etc/group (root, nobody), and
# /etc/udhcpc/default.script (busybox's udhcpc sets no address without it). CMD /bin/sh.
set -euo pipefail

repo=patchbay-busybox
busybox_ver=$(apt-cache show --no-all-versions busybox-static 2>/dev/null | sed -n 's/^Version: *//p' | head -1)
if [ -z "$busybox_ver" ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq >/dev/null
  busybox_ver=$(apt-cache show --no-all-versions busybox-static | sed -n 's/^Version: *//p' | head -1)
fi
[ -n "$busybox_ver" ] || { echo "build-test-docker-image: busybox-static is unknown to apt" >&2; exit 1; }
recipe=$(sha256sum "$0" | cut -c1-12)
tag="$(printf '%s' "$busybox_ver" | tr -c 'A-Za-z0-9_.-' '_')-$recipe"
if docker image inspect "$repo:$tag" >/dev/null 2>&1; then
  docker tag "$repo:$tag" "$repo:latest"
  echo "$repo:latest"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 777 "$work" # apt-get download fetches as the _apt user
(cd "$work" && apt-get download -qq busybox-static >/dev/null)
dpkg -x "$work"/busybox-static_*.deb "$work/deb"
root="$work/root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,root,etc/udhcpc,etc/network,var/run}
chmod 1777 "$root/tmp"
cp "$work/deb/bin/busybox" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
  [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
cat >"$root/etc/udhcpc/default.script" <<'SCRIPT'
#!/bin/sh
case "$1" in
  deconfig) ip addr flush dev "$interface"; ip link set "$interface" up ;;
  bound|renew) ip addr add "$ip/${mask:-24}" dev "$interface" 2>/dev/null; [ -n "$router" ] && ip route add default via ${router%% *} dev "$interface" 2>/dev/null; true ;;
esac
SCRIPT
chmod 755 "$root/etc/udhcpc/default.script"
tar -C "$root" -c . | docker import --change 'CMD ["/bin/sh"]' - "$repo:$tag" >/dev/null
docker tag "$repo:$tag" "$repo:latest"
echo "$repo:latest"
