import fs from "node:fs";
import path from "node:path";
import { ConflictError } from "../../platform/core/errors.js";
import { findOnPath } from "../../platform/core/executables.js";

/**
 * What a docker node needs besides its image, written by the compute to `<dataDir>/resources/docker/` at each start
 * (as gns3-server copies its resources there) and shown read-only to every container at `/gns3`:
 * - `bin/busybox`: the host's static busybox (Debian's busybox-static), so the init works in any image;
 * - `init.sh`: PID 1 in front of the image's command (GNS3's init, without the bind mounts an unprivileged
 *   container cannot make): loopback up, waits for the compute to give it `eth0..N`, sets them up, `ifup -a`
 *   (the node's `/etc/network/interfaces`), then runs the command as the image's user;
 * - `run-cmd.sh`: restores the image's PATH and runs the command.
 * And, outside the containers, `tap-bridge.py`: the helper that joins one adapter's TAP to its UDP link.
 */

export const INIT_SH = `#!/gns3/bin/busybox sh
# Patchbay docker node init (after gns3-server's /gns3/init.sh). Runs as PID 1, as root, with NET_ADMIN only.
OLD_PATH="$PATH"
if [ ! -d /tmp/gns3/bin ]; then
  /gns3/bin/busybox mkdir -p /tmp/gns3/bin 2>/dev/null
  for applet in $(/gns3/bin/busybox --list); do /gns3/bin/busybox ln -s /gns3/bin/busybox "/tmp/gns3/bin/$applet" 2>/dev/null; done
fi
PATH=/gns3/bin:/tmp/gns3/bin:/sbin:/usr/sbin:/bin:/usr/bin
export PATH

if [ ! -s /etc/hosts ] 2>/dev/null; then
  printf '127.0.0.1\\tlocalhost\\n127.0.1.1\\t%s\\n::1\\tlocalhost ip6-localhost ip6-loopback\\n' "$(hostname)" > /etc/hosts 2>/dev/null
fi

if [ -n "$GNS3_EXTRA_HOSTS" ] && [ -w /etc/hosts ]; then
  sed -i '/^# GNS3_EXTRA_HOSTS_START$/,/^# GNS3_EXTRA_HOSTS_END$/d' /etc/hosts
  printf '# GNS3_EXTRA_HOSTS_START\n%s\n# GNS3_EXTRA_HOSTS_END\n' "$GNS3_EXTRA_HOSTS" >> /etc/hosts
fi

ip link set lo up
# The compute moves eth0..N into this namespace right after the start; wait for the last one (at most 60 s).
if [ -n "$GNS3_MAX_ETHERNET" ] && [ "$GNS3_MAX_ETHERNET" != "eth-1" ]; then
  n=0
  while ! grep -q "^ *$GNS3_MAX_ETHERNET:" /proc/net/dev && [ $n -lt 120 ]; do sleep 0.5; n=$((n + 1)); done
fi
for dev in $(sed -n 's/^ *\\(eth[0-9]*\\):.*/\\1/p' /proc/net/dev); do ip link set "$dev" up; done
if [ -f /etc/network/interfaces ]; then
  mkdir -p /run/network /var/run 2>/dev/null
  ifup -a -f
fi

if [ -n "$GNS3_USER" ] && [ "$GNS3_USER" != root ]; then
  exec su -p -s /tmp/gns3/bin/sh "$GNS3_USER" -c 'exec /gns3/bin/busybox sh /gns3/run-cmd.sh "$@"' sh "$OLD_PATH" "$@"
fi
exec /gns3/bin/busybox sh /gns3/run-cmd.sh "$OLD_PATH" "$@"
`;

export const RUN_CMD_SH = `# Patchbay: the image's PATH back, then its command.
PATH="$1"
export PATH
shift
if [ $# -eq 0 ]; then exec /bin/sh; fi
exec "$@"
`;

/**
 * One adapter: a TAP (made by the compute, owned by the helper's user) on one side, a UDP socket on 127.0.0.1 on
 * the other, frames copied both ways. Writes that fail (the container's interface is down: EIO) are dropped, as a
 * cable to a port that is down drops them; the helper ends when the TAP goes away (its container stopped) or its
 * parent, the server, dies. Prints "ready" once attached to the TAP.
 */
export const TAP_BRIDGE_PY = `import ctypes, fcntl, os, select, signal, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: ends with the server
if os.getppid() == 1:
    sys.exit(0)
name, lport, rport = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
TUNSETIFF, IFF_TAP, IFF_NO_PI = 0x400454CA, 0x0002, 0x1000
tap = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(tap, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", lport))
dest = ("127.0.0.1", rport)
sys.stdout.write("ready\\n")
sys.stdout.flush()
while True:
    readable, _, _ = select.select([tap, udp], [], [])
    if tap in readable:
        try:
            frame = os.read(tap, 65536)
        except OSError:
            sys.exit(0)
        if not frame:
            sys.exit(0)
        try:
            udp.sendto(frame, dest)
        except OSError:
            pass
    if udp in readable:
        try:
            frame = udp.recv(65536)
        except OSError:
            continue
        try:
            os.write(tap, frame)
        except OSError as e:
            if e.errno in (9, 77):  # EBADF, EBADFD: the TAP is gone
                sys.exit(0)
`;

/** A static busybox of the host (Debian: busybox-static's /bin/busybox), or null. */
export function findStaticBusybox(): string | null {
  for (const name of ["busybox-static", "busybox.static", "busybox"]) {
    const found = findOnPath(name);
    if (found && isStatic(found)) return found;
  }
  return null;
}

function isStatic(file: string): boolean {
  try {
    const fd = fs.openSync(file, "r");
    try {
      const head = Buffer.alloc(4096);
      fs.readSync(fd, head, 0, head.length, 0);
      // An ELF with a PT_INTERP program header is dynamic: look for the interpreter path in the first page.
      return head.subarray(0, 4).toString("latin1") === "\x7fELF" && !head.includes("ld-linux");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** Writes `<dataDir>/resources/docker` (idempotent) and returns its path; 409 without a static busybox. */
export function writeDockerResources(dataDir: string): string {
  const busybox = findStaticBusybox();
  if (!busybox) {
    throw new ConflictError("No busybox executable could be found, please install busybox (apt install busybox-static on Debian/Ubuntu) and make sure it is in your PATH");
  }
  const dir = path.join(dataDir, "resources", "docker");
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  const put = (rel: string, text: string | Buffer, mode: number) => {
    const file = path.join(dir, rel);
    const current = fs.existsSync(file) ? fs.readFileSync(file) : undefined;
    if (current?.equals(Buffer.isBuffer(text) ? text : Buffer.from(text))) return;
    fs.writeFileSync(`${file}.tmp`, text, { mode });
    fs.renameSync(`${file}.tmp`, file);
  };
  const st = fs.statSync(path.join(dir, "bin", "busybox"), { throwIfNoEntry: false });
  const src = fs.statSync(busybox);
  if (!st || st.size !== src.size || st.mtimeMs < src.mtimeMs) put("bin/busybox", fs.readFileSync(busybox), 0o755);
  put("init.sh", INIT_SH, 0o755);
  put("run-cmd.sh", RUN_CMD_SH, 0o755);
  put("tap-bridge.py", TAP_BRIDGE_PY, 0o644);
  return dir;
}

/**
 * The system's python3 for the tap helper: Debian's /usr/bin/python3 first (a per-user shim on PATH, e.g. pyenv's
 * under /root, is not reachable by the helper's user), else the one on PATH.
 */
export function findPython(): string | null {
  for (const candidate of ["/usr/bin/python3", "/usr/local/bin/python3"]) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {}
  }
  return findOnPath("python3");
}
