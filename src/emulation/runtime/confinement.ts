import fs from "node:fs";
import path from "node:path";
import { ConflictError } from "../../platform/core/errors.js";
import { findOnPath } from "../../platform/core/executables.js";

/**
 * Every emulator process (vpcs, QEMU) runs confined, so what a client's node can reach is decided by where it runs,
 * not by which options were spotted. The command is wrapped in Debian's bubblewrap (`bwrap`) under `prlimit`:
 * - mount view: /usr (and the /bin, /lib… links) and a few /etc files read-only, a fresh /dev (plus /dev/kvm when
 *   the host has it), /proc, an empty /tmp, the node directory and its socket directory read-write, and the files
 *   it was given (images, their backing chain) read-only at their real paths. Nothing else of the host exists.
 * - namespaces: pid, ipc, uts, cgroup private; the network is shared (NICs are UDP sockets on 127.0.0.1 to the link
 *   relays, the console listens on the server's address). `--die-with-parent`: the kernel kills the whole sandbox
 *   when the server dies, even by SIGKILL, and daemons (vpcs) die with the sandbox's init.
 * - user: no capabilities. A root server runs the program as `nobody` (65534, real on the host: node and socket
 *   directories are chowned to it, files it is given made readable by its group), with the group of /dev/kvm for KVM; a
 *   non-root server is already unprivileged and runs it as itself in a user namespace that cannot nest another.
 * - limits: RLIMIT_AS (everything the process maps, not only guest RAM: `-object memory-backend-ram,size=64G`
 *   fails at start), no core dumps.
 * - environment: only PATH and the runtime's markers (the server's secrets, e.g. DATABASE_URL, stay out).
 */
export const CONFINED_UID = 65534;

/** Top-level links or directories of the system that programs load from (usrmerge makes most of them links). */
const SYSTEM_ROOTS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** The /etc files the dynamic loader and libc read; the rest of /etc (keys, the server's config) stays out. */
const ETC_FILES = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd", "/etc/group"];

export interface Confined {
  /** The program and its arguments. */
  argv: string[];
  /** Read-write and the working directory. */
  workdir: string;
  /** Other read-write directories (a QMP socket's). */
  writable?: string[];
  /** Files bound read-only at their real paths (a program outside /usr must be among them). */
  readOnly?: string[];
  /** RLIMIT_AS in bytes. */
  addressSpace: number;
  /** Niceness (0..19). */
  nice?: number;
  /** Markers in the environment (the runtime finds its processes by them). */
  env: Record<string, string>;
}

const runningAsRoot = () => process.getuid?.() === 0;

/**
 * The helpers' paths, looked up once per $PATH: a look-up is a few stat calls per candidate directory, on the event
 * loop, for each of the four helpers of every node started (25 ms of a 50-node start all).
 */
const located = new Map<string, string>();
function locate(name: string): string | null {
  const key = `${name}\0${process.env.PATH}`;
  const found = located.get(key) ?? findOnPath(name); // one missing is looked for again: it may be installed meanwhile
  if (found) located.set(key, found);
  return found;
}

function tool(name: string, pkg: string): string {
  const found = locate(name);
  if (!found) throw new ConflictError(`${name} is not installed on this host (Debian package ${pkg}): nodes only run confined, so this node was not started`);
  return found;
}

/**
 * Directories the confined user must write, with the files the server put in them (overlays, startup.vpc): chowned
 * to it when the server is root (no-op otherwise). lchown, one level: a link the node left there is not followed.
 */
export function grantWrite(dirs: string[]): void {
  if (!runningAsRoot()) return;
  for (const dir of dirs) {
    fs.mkdirSync(dir, { recursive: true });
    fs.lchownSync(dir, CONFINED_UID, CONFINED_UID);
    for (const entry of fs.readdirSync(dir)) fs.lchownSync(path.join(dir, entry), CONFINED_UID, CONFINED_UID);
  }
}

/**
 * Files the confined user must read (the image store writes 0600): given to its group, readable by the group, when
 * the server is root — not to everyone, since other users of the host have no business reading lab images.
 * Callers pass only files of the image store and the node's own program (left alone when others may read it).
 */
function grantRead(files: string[]): void {
  if (!runningAsRoot()) return;
  for (const f of files) {
    const st = fs.statSync(f);
    if (st.mode & 0o004 || (st.gid === CONFINED_UID && st.mode & 0o040)) continue;
    fs.chownSync(f, st.uid, CONFINED_UID);
    fs.chmodSync(f, (st.mode & 0o7777) | 0o040);
  }
}

/**
 * The directories leading to the bound paths, made searchable (bwrap creates missing parents 0700 as root, which
 * nobody cannot cross to reach an absolute path such as an image or the QMP socket).
 */
function parentDirs(paths: string[]): string[] {
  const dirs = new Set<string>();
  for (const p of paths) for (let d = path.dirname(p); d !== "/" && d !== "/tmp"; d = path.dirname(d)) dirs.add(d);
  return [...dirs].sort((a, b) => a.split("/").length - b.split("/").length).flatMap((d) => ["--perms", "0755", "--dir", d]);
}

function systemView(): string[] {
  const out = ["--perms", "0755", "--dir", "/etc", "--ro-bind", "/usr", "/usr"];
  for (const root of SYSTEM_ROOTS) {
    try {
      const st = fs.lstatSync(root);
      if (st.isSymbolicLink()) out.push("--symlink", fs.readlinkSync(root), root);
      else if (st.isDirectory()) out.push("--ro-bind", root, root);
    } catch {}
  }
  for (const f of ETC_FILES) out.push("--ro-bind-try", f, f);
  return out;
}

/** argv of the confined command: prlimit → bwrap → (setpriv to nobody, root server only) → the program. */
export function confinedCommand(c: Confined): { argv: string[]; env: Record<string, string> } {
  const bwrap = tool("bwrap", "bubblewrap");
  const prlimit = tool("prlimit", "util-linux");
  const root = runningAsRoot();
  const setpriv = root ? tool("setpriv", "util-linux") : undefined;
  const readOnly = [...new Set(c.readOnly ?? [])];
  grantRead(readOnly);
  const nice = locate("nice");
  const argv = [
    ...(nice ? [nice, "-n", String(c.nice ?? 0)] : []),
    prlimit, `--as=${c.addressSpace}`, "--core=0", "--",
    bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
    ...(root ? [] : ["--unshare-user", "--disable-userns"]),
    ...systemView(),
    "--dev", "/dev", "--dev-bind-try", "/dev/kvm", "/dev/kvm", "--proc", "/proc", "--perms", "01777", "--tmpfs", "/tmp",
    ...parentDirs([c.workdir, ...(c.writable ?? []), ...readOnly]),
    ...[c.workdir, ...(c.writable ?? [])].flatMap((d) => ["--bind", d, d]),
    ...readOnly.flatMap((f) => ["--ro-bind", f, f]),
    "--chdir", c.workdir, "--cap-drop", "ALL",
  ];
  if (setpriv) {
    // bwrap keeps only what setpriv needs to become nobody; the change of uid then clears every capability.
    const kvmGroup = fs.existsSync("/dev/kvm") ? fs.statSync("/dev/kvm").gid : undefined;
    argv.push("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", setpriv, "--reuid", String(CONFINED_UID), "--regid", String(CONFINED_UID));
    argv.push(...(kvmGroup === undefined ? ["--clear-groups"] : ["--groups", String(kvmGroup)]), "--inh-caps", "-all");
  }
  argv.push("--", ...c.argv);
  return { argv, env: { PATH: "/usr/bin:/bin", ...c.env } };
}

/**
 * Test-only: the QEMU option allow-list skipped, so a test proves the confinement holds on its own. Honoured only
 * with NODE_ENV=test and PATCHBAY_TEST_UNCHECKED_QEMU_OPTIONS=1 together (never set them on a real server).
 */
export function optionChecksOffForTests(): boolean {
  return process.env.NODE_ENV === "test" && process.env.PATCHBAY_TEST_UNCHECKED_QEMU_OPTIONS === "1";
}
