import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { ConflictError } from "../../platform/core/errors.js";
import { confinedCommand, grantWrite } from "./confinement.js";
import { findOnPath } from "../../platform/core/executables.js";
import { listensOn } from "./listening.js";
import { spawnDetached } from "./spawner.js";
import { descendants, findOwnedPids, isAlive, killAndWait, killRecorded, NODE_ENV, OWNER_ENV, readTail, sleep, writePidFile } from "./processes.js";

/**
 * One VPCS process per started vpcs node. The Debian `vpcs` (0.5b2) has no foreground flag: with `-p <port>`
 * it daemonizes (the process we spawn exits at once) and leaves two processes — the console server, re-parented
 * to init, and a child on a pty that runs the PC. Both inherit the environment we give, so every process we
 * start carries the runtime's markers (processes.ts); the real pids are the descendants of the process spawned,
 * recorded in a pid file under <dataDir>/run/, and killed on stop and on the next start-up after a crash.
 * It runs confined (confinement.ts) like a VM: the daemon is re-parented to the sandbox's init, not to the host's,
 * and the kernel kills the whole sandbox when the server dies, even by SIGKILL.
 */

/** RLIMIT_AS of a vpcs: its console server and PC measured at VmPeak 1.09 GiB (mostly thread stacks and arenas). */
const VPCS_ADDRESS_SPACE = 1536 * 1024 * 1024;

/**
 * The UDP ports a vpcs binds, as offsets from its `-s` port. Measured with `ss -lunp` (vpcs 0.5b2, `-i 1`): the
 * PC's port and, for its relay hub (the console's `relay` command), `-s`+9 — whatever `-i` is; +1..+8 stay unbound
 * with one PC. It starts without +9 when that port is taken, but takes it when free, so the pool reserves it too:
 * otherwise a link end could be given a port vpcs grabs a moment later.
 */
export const VPCS_UDP_OFFSETS = [0, 9] as const;

/** How long a start waits for the console to listen before it gives up (409). */
const CONSOLE_WAIT_MS = 20_000;

/** The startup script vpcs runs, in the node directory. */
export const VPCS_STARTUP_SCRIPT = "startup.vpc";

let cachedBinary: string | null | undefined;

/** Absolute path of the vpcs binary (PATCHBAY_VPCS_PATH or $PATH), or null when it is not installed. */
export function findVpcs(): string | null {
  if (cachedBinary !== undefined) return cachedBinary;
  cachedBinary = findOnPath("vpcs", process.env.PATCHBAY_VPCS_PATH);
  return cachedBinary;
}

export interface VpcsOptions {
  /** Server identity (the data directory): leftovers of this server are recognised by it. */
  owner: string;
  nodeId: string;
  /** The node directory: working directory, holds startup.vpc and vpcs.log. */
  workdir: string;
  /** Where pid files live (<dataDir>/run). */
  runDir: string;
  consolePort: number;
  /** UDP NIO: vpcs listens on `local` (and binds local+9, VPCS_UDP_OFFSETS) and sends its frames to `remote` on `host`. */
  nio: { local: number; remote: number; host?: string };
  /** First byte of the MAC address range (-m), so two PCs of one project differ. */
  macOffset?: number;
  binary?: string;
}

/** A TCP port the kernel considers free right now (for a console nobody is meant to reach). */
export function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "0.0.0.0", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** vpcs listens on 0.0.0.0: probe the wildcard address. */
export function tcpPortIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "0.0.0.0", () => srv.close(() => resolve(true)));
  });
}

export class VpcsProcess {
  pids: number[] = [];
  /** The process spawned (the sandbox's outer end): every process of the node runs below it. */
  private root?: number;
  commandLine = "";
  private readonly pidFile: string;

  constructor(readonly opts: VpcsOptions) {
    this.pidFile = path.join(opts.runDir, `${opts.nodeId}.json`);
  }

  get running(): boolean {
    return this.pids.some(isAlive);
  }

  async start(): Promise<void> {
    const o = this.opts;
    const binary = o.binary ?? findVpcs();
    if (!binary) throw new ConflictError("VPCS is not installed on this host: the vpcs program was not found in PATH (install the Debian package vpcs)");
    fs.mkdirSync(o.workdir, { recursive: true });
    fs.mkdirSync(o.runDir, { recursive: true });
    await killRecorded(this.pidFile, o.owner); // a leftover of this node must not hold its ports
    // vpcs reports a taken console port on stderr and still exits 0; a probe on the port would then reach the
    // other program, so check first.
    if (!(await tcpPortIsFree(o.consolePort))) {
      throw new ConflictError(`Console port ${o.consolePort} is already used by another program on this host`);
    }

    const args = ["-p", String(o.consolePort), "-m", String(o.macOffset ?? 0), "-i", "1"];
    args.push("-s", String(o.nio.local), "-c", String(o.nio.remote), "-t", o.nio.host ?? "127.0.0.1");
    const startup = path.join(o.workdir, VPCS_STARTUP_SCRIPT);
    if (fs.existsSync(startup)) args.push(startup);
    this.commandLine = [binary, ...args].join(" ");

    grantWrite([o.workdir]);
    // The sandbox ends when its first process does, and vpcs's launcher exits at once: that process becomes
    // `tail --pid=<daemon>` (found in the sandbox's own /proc with shell builtins), so the sandbox lives exactly as
    // long as vpcs, and no short-lived helper ever carries the node's marker (the recorded pids stay real).
    const comm = path.basename(binary).slice(0, 15);
    const keeper = `"$@" || exit; for f in /proc/[0-9]*/comm; do read -r c < "$f" && [ "$c" = '${comm}' ] && p=\${f%/comm} && exec tail --pid="\${p#/proc/}" -f /dev/null; done`;
    const confined = confinedCommand({
      argv: ["/bin/sh", "-c", keeper, "sh", binary, ...args],
      workdir: o.workdir,
      readOnly: binary.startsWith("/usr/") ? [] : [binary],
      addressSpace: VPCS_ADDRESS_SPACE,
      env: { [OWNER_ENV]: o.owner, [NODE_ENV]: o.nodeId },
    });
    // Forked by the spawn helper (spawner.ts), not by the server: a fork of the server blocks its event loop.
    let code: number | null = null;
    const child = await spawnDetached(confined.argv, { cwd: o.workdir, env: confined.env, log: path.join(o.workdir, "vpcs.log") }).catch(() => undefined);
    // The sandbox lives as long as the daemon; only a failure to launch ends it early.
    void child?.exited.then((c) => (code = c));

    this.root = child?.pid;
    this.pids = child ? [child.pid] : [];
    this.writePidFile();
    // The wait ends early when the sandbox ends (vpcs could not start); a busy host (many nodes starting at once,
    // other jobs) can take seconds to get a healthy one listening.
    const running = this.pids.length > 0 ? await this.consoleListening(CONSOLE_WAIT_MS, () => code !== null) : undefined;
    if (!running) {
      await this.stop(true);
      const tail = readTail(path.join(o.workdir, "vpcs.log"));
      throw new ConflictError(`VPCS could not start (exit code ${code}, console port ${o.consolePort} not answering)${tail ? `: ${tail}` : ""}`);
    }
    // The processes seen when the console listened: the daemon, and the PC on its pty when it came that fast. Stop
    // reads the tree below the root again, so one that came later is not missed.
    this.pids = running;
    this.writePidFile();
  }

  /**
   * Waits until the console server listens, without connecting to it (see listensOn); answers the node's processes
   * then, or undefined on time-out.
   */
  private async consoleListening(timeoutMs: number, ended: () => boolean): Promise<number[] | undefined> {
    const deadline = Date.now() + timeoutMs;
    let pids: number[] = [];
    const below = async () => (pids = await descendants(this.root!));
    // The sandbox's processes come first; the daemon that listens appears among them a moment later.
    while (!(await listensOn(below, this.opts.consolePort))) {
      if (ended() || Date.now() > deadline) return undefined;
      await sleep(25);
    }
    return pids;
  }

  /** `thorough` (a failed start): also every process that carries this node's marker, wherever it ended up. */
  async stop(thorough = false): Promise<void> {
    const found = thorough ? findOwnedPids(this.opts.owner, this.opts.nodeId) : this.root ? await descendants(this.root) : [];
    await killAndWait([...new Set([...this.pids, ...found])], this.opts.owner);
    this.pids = [];
    fs.rmSync(this.pidFile, { force: true });
  }

  private writePidFile(): void {
    writePidFile(this.pidFile, { owner: this.opts.owner, nodeId: this.opts.nodeId, pids: this.pids, commandLine: this.commandLine });
  }
}

/** For diagnostics: `vpcs -v` first line with a version. */
export function vpcsVersion(binary = findVpcs()): string | null {
  if (!binary) return null;
  const r = spawnSync(binary, ["-v"], { encoding: "utf8", timeout: 2000 });
  return /version ([\w.]+)/.exec(r.stdout ?? "")?.[1] ?? null;
}
