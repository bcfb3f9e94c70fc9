#!/usr/bin/env bash
# Builds the tiny Linux guest the QEMU lab test and benchmark boot: Debian's cloud kernel plus a busybox-static
# initramfs whose /init brings up eth0.. with static addresses from the kernel command line and gives a shell on
# the serial console (prompt "<hostname># "). Nothing is installed: the .debs are fetched with `apt-get download`
# and unpacked with `dpkg -x`. The result is cached under a directory keyed by the package versions and this
# script's text, so a second run costs nothing. Prints the directory holding vmlinuz and initrd.gz.
#
# Kernel command line the guest understands (besides console=ttyS0):
#   ip=A.B.C.D/NN      address of eth0        ipN=A.B.C.D/NN  address of ethN (N = 1..7)
#   gw=A.B.C.D         default route          hostname=NAME   prompt "NAME# " (default guest)
# When the network is up it prints "GUEST-READY uptime=<s> mac=<eth0 mac> ip=<eth0 address>".
set -euo pipefail

cache_root="${PATCHBAY_GUEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/patchbay/test-guest}"

# The cloud kernel metapackage depends on exactly one versioned image package: that is the kernel we take.
kernel_of() { apt-cache show --no-all-versions linux-image-cloud-amd64 2>/dev/null | sed -n 's/^Depends: *\(linux-image-[^ ,]*\).*/\1/p' | head -1; }
kernel_pkg=$(kernel_of)
# A container image often ships without apt's package lists: fetch them once when we may.
if [ -z "$kernel_pkg" ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq >/dev/null
  kernel_pkg=$(kernel_of)
fi
if [ -z "$kernel_pkg" ]; then
  echo "build-test-guest: linux-image-cloud-amd64 is unknown to apt (run apt-get update on a Debian host)" >&2
  exit 1
fi
kernel_ver=$(apt-cache show --no-all-versions "$kernel_pkg" | sed -n 's/^Version: *//p' | head -1)
busybox_ver=$(apt-cache show --no-all-versions busybox-static | sed -n 's/^Version: *//p' | head -1)
recipe=$(sha256sum "$0" | cut -c1-12)
key="${kernel_pkg}_${kernel_ver}_busybox-${busybox_ver}_${recipe}"
out="$cache_root/${key//[^A-Za-z0-9._+-]/_}"
if [ -s "$out/vmlinuz" ] && [ -s "$out/initrd.gz" ]; then
  echo "$out"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 777 "$work" # apt-get download fetches as the _apt user
(cd "$work" && apt-get download -qq "$kernel_pkg" busybox-static >/dev/null)
mkdir "$work/deb"
for d in "$work"/*.deb; do dpkg -x "$d" "$work/deb"; done

root="$work/root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,lib/modules}
cp "$work/deb/bin/busybox" "$root/bin/busybox"
# The cloud kernel builds virtio-net as modules and ships no modules.dep: /init loads this chain by name.
modules="failover net_failover virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_net"
for m in $modules; do
  f=$(find "$work/deb/lib/modules" -name "$m.ko*" | head -1)
  [ -n "$f" ] || { echo "build-test-guest: module $m not found in $kernel_pkg" >&2; exit 1; }
  case "$f" in
    *.xz) xz -dc "$f" >"$root/lib/modules/$m.ko" ;;
    *) cp "$f" "$root/lib/modules/$m.ko" ;;
  esac
done

cat >"$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
# No /dev/console in the archive (that needs mknod): take the console once devtmpfs has it.
exec </dev/console >/dev/console 2>&1
for pass in 1 2; do
  for m in $modules; do insmod /lib/modules/\$m.ko 2>/dev/null; done
done
i=0
while [ ! -e /sys/class/net/eth0 ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1)); done
ip link set lo up
host=guest
for w in \$(cat /proc/cmdline); do
  case "\$w" in
    ip=*/*) ip addr add "\${w#ip=}" dev eth0 ;;
    ip[1-7]=*/*) n=\${w%%=*}; ip addr add "\${w#*=}" dev "eth\${n#ip}" ;;
    hostname=*) host=\${w#hostname=} ;;
  esac
done
for dev in /sys/class/net/eth*; do [ -e "\$dev" ] && ip link set "\${dev##*/}" up; done
for w in \$(cat /proc/cmdline); do
  case "\$w" in gw=*) ip route add default via "\${w#gw=}" ;; esac
done
hostname "\$host"
addr=\$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{print \$4}')
echo "GUEST-READY uptime=\$(cut -d' ' -f1 /proc/uptime) mac=\$(cat /sys/class/net/eth0/address 2>/dev/null) ip=\$addr"
export PS1="\$host# " HOME=/ TERM=vt100
while true; do setsid cttyhack sh; done
EOF
chmod 755 "$root/init"

mkdir -p "$work/out"
cp "$work/deb/boot/vmlinuz-"* "$work/out/vmlinuz"
(cd "$root" && find . | "$root/bin/busybox" cpio -o -H newc 2>/dev/null | gzip -9 >"$work/out/initrd.gz")
mkdir -p "$cache_root"
# Two builds at once (parallel test files): the first rename wins, the other copy is dropped.
mv "$work/out" "$out.$$"
mv -T "$out.$$" "$out" 2>/dev/null || rm -rf "$out.$$"
echo "$out"
