import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConflictError } from "../../platform/core/errors.js";
import { confinedCommand, grantWrite } from "./confinement.js";
import { qmp, qmpStatus } from "./qemu-monitor.js";
import { descendants, isAlive, killAndWait, killRecorded, NODE_ENV, OWNER_ENV, readTail, sleep, writePidFile } from "./processes.js";

/**
 * One qemu-system process per started qemu node. Unlike vpcs it stays in the foreground, so the pid is the child
 * we spawn; it still carries the runtime's environment marker (PATCHBAY_RUNTIME_OWNER / PATCHBAY_NODE_ID) and a
 * pid file in <dataDir>/run/, so crash recovery and the exit handler find it like a vpcs. It runs confined
 * (confinement.ts: its own mount view, nobody, an address-space limit, QEMU's -sandbox; the kernel kills it when
 * the server dies, even by SIGKILL) and niced: guests boot under TCG at full CPU; the API must stay responsive.
 * The monitor is QMP on a unix socket (qemu-monitor.ts): stop/cont for suspend/resume, system_reset for reload,
 * quit on stop (then SIGTERM, then SIGKILL).
 */
export interface QemuProcessOptions {
  owner: string;
  nodeId: string;
  name: string;
  workdir: string;
  runDir: string;
  binary: string;
  args: string[];
  qmpSocket: string;
  /** Files the VM is given, bound read-only: images and every file of their backing chains. */
  readOnly: string[];
  /** RLIMIT_AS of the process, bytes (qemuAddressSpace). */
  addressSpace: number;
  /** Guest RAM in MB (the memory cap counts it). */
  ram: number;
  /** GNS3's on_close: power_off (quit), shutdown_signal (ACPI power button first); save_vm_state stops like power_off. */
  onClose: string;
  /** 0..19; raised to at least DEFAULT_NICE so guests never outrank the API. */
  nice: number;
  /** Called once when the process ends without stop() having asked (a crash, the guest powering off). */
  onExit?: (log: string) => void;
}

/** Niceness of VM processes unless process_priority asks for even lower. */
export const DEFAULT_NICE = 10;
const READY_TIMEOUT_MS = 15_000;
const QUIT_GRACE_MS = 3000;
const POWERDOWN_GRACE_MS = 30_000;

/**
 * The QMP socket, alone in a directory of its node (the only one of <dataDir>/run the VM sees, so it cannot touch
 * other nodes' sockets or pid files). Unix socket paths are limited to 108 bytes; a deep data directory gets a
 * short directory in the temp directory.
 */
export function qmpSocketPath(runDir: string, nodeId: string): string {
  const p = path.join(runDir, nodeId, "qmp.sock");
  if (Buffer.byteLength(p) < 100) return p;
  return path.join(os.tmpdir(), `patchbay-${createHash("sha1").update(p).digest("hex").slice(0, 16)}`, "qmp.sock");
}

/**
 * RLIMIT_AS of a VM: guest RAM plus what QEMU maps besides. Measured with the test guest under TCG (QEMU 7.2,
 * 128 MB): VmPeak = RAM + 1.26 GiB with 1 vCPU, + 1.47 GiB with 4 (1 GiB is TCG's translation buffer, the rest
 * libraries, thread stacks and malloc arenas). Allowed: RAM + 1.5 GiB + 128 MiB per vCPU, about 30% headroom.
 */
export function qemuAddressSpace(ramMb: number, vcpus: number): number {
  return (ramMb + 1536 + 128 * Math.max(1, vcpus)) * 1024 * 1024;
}

/**
 * Start-up, once no VM of this data directory runs: the QMP socket directories a killed server left (in `run/`,
 * and in the temporary directory for the recorded nodes whose path there was too long), and sockets of the
 * layout before them (`run/<node>.qmp`).
 */
export function removeStaleQmpSockets(runDir: string, nodeIds: string[]): void {
  const entries = fs.existsSync(runDir) ? fs.readdirSync(runDir, { withFileTypes: true }) : [];
  const inRunDir = entries.filter((e) => e.isDirectory() || e.name.endsWith(".qmp")).map((e) => path.join(runDir, e.name));
  for (const stale of [...inRunDir, ...nodeIds.map((id) => path.dirname(qmpSocketPath(runDir, id)))]) fs.rmSync(stale, { recursive: true, force: true });
}

export class QemuProcess {
  pids: number[] = [];
  readonly commandLine: string;
  private child?: ChildProcess;
  private stopping = false;
  private readonly pidFile: string;
  private readonly log: string;

  constructor(readonly opts: QemuProcessOptions) {
    this.pidFile = path.join(opts.runDir, `${opts.nodeId}.json`);
    this.log = path.join(opts.workdir, "qemu.log");
    // GNS3's command_line: argv joined with spaces, unquoted.
    this.commandLine = [opts.binary, ...opts.args].join(" ");
  }

  get running(): boolean {
    return this.pids.some(isAlive);
  }

  get ram(): number {
    return this.opts.ram;
  }

  async start(): Promise<void> {
    const o = this.opts;
    fs.mkdirSync(o.workdir, { recursive: true });
    fs.mkdirSync(o.runDir, { recursive: true });
    await killRecorded(this.pidFile, o.owner); // a leftover of this node must not hold its ports
    const qmpDir = path.dirname(o.qmpSocket);
    fs.rmSync(qmpDir, { recursive: true, force: true });
    fs.mkdirSync(qmpDir, { recursive: true, mode: 0o700 });
    grantWrite([o.workdir, qmpDir]);
    const confined = confinedCommand({
      argv: [o.binary, ...o.args],
      workdir: o.workdir,
      writable: [qmpDir],
      readOnly: o.binary.startsWith("/usr/") ? o.readOnly : [o.binary, ...o.readOnly],
      addressSpace: o.addressSpace,
      nice: Math.max(DEFAULT_NICE, Math.min(19, o.nice)),
      env: { [OWNER_ENV]: o.owner, [NODE_ENV]: o.nodeId },
    });
    const [cmd, ...args] = confined.argv;
    fs.writeFileSync(this.log, `Start QEMU with ${this.commandLine}\n\nExecution log:\n`);
    const out = fs.openSync(this.log, "a");
    const child = spawn(cmd, args, {
      cwd: o.workdir,
      env: confined.env,
      stdio: ["ignore", out, out],
      detached: true, // its own process group: a terminal's Ctrl-C reaches the server, which stops VMs in order
    });
    fs.closeSync(out);
    this.child = child;
    child.once("error", () => {});
    child.once("exit", () => {
      this.pids = [];
      fs.rmSync(this.pidFile, { force: true });
      if (!this.stopping) o.onExit?.(readTail(this.log));
    });
    if (child.pid) this.pids = [child.pid];
    writePidFile(this.pidFile, { owner: o.owner, nodeId: o.nodeId, pids: this.pids, commandLine: this.commandLine });
    if (!(await this.ready())) {
      this.stopping = true;
      await killAndWait(this.pids, o.owner, 500);
      const tail = readTail(this.log);
      throw new ConflictError(`QEMU could not start ${o.name}${tail ? `: ${tail}` : ""}`);
    }
  }

  /** The monitor answers (QEMU has parsed its command line, bound the console and the NICs) or the process died. */
  private async ready(): Promise<boolean> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline && this.child?.exitCode === null && this.child.signalCode === null) {
      if (fs.existsSync(this.opts.qmpSocket)) {
        try {
          await qmpStatus(this.opts.qmpSocket);
          return true;
        } catch {}
      }
      await sleep(50);
    }
    return false;
  }

  private command(execute: string, args?: Record<string, unknown>): Promise<unknown> {
    if (!this.running) throw new ConflictError(`${this.opts.name} is not running`);
    return qmp(this.opts.qmpSocket, execute, args);
  }

  async status(): Promise<string> {
    return this.running ? qmpStatus(this.opts.qmpSocket) : "stopped";
  }

  /** Pauses the vCPUs (the process, its console and its NIC sockets stay). */
  async suspend(): Promise<void> {
    if (["running", "prelaunch"].includes(await this.status())) await this.command("stop");
  }

  async resume(): Promise<void> {
    if ((await this.status()) === "paused") await this.command("cont");
  }

  async reset(): Promise<void> {
    await this.command("system_reset");
  }

  /** Carrier of NIC n (GNS3's replicate_network_connection_state): off while its adapter has no link. */
  async setLink(adapter: number, up: boolean): Promise<void> {
    if (this.running) await this.command("set_link", { name: `gns3-${adapter}`, up });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const o = this.opts;
    if (this.running) {
      const graceful = o.onClose === "shutdown_signal" ? "system_powerdown" : "quit";
      await qmp(o.qmpSocket, graceful, undefined, 2000).catch(() => {});
      const deadline = Date.now() + (graceful === "quit" ? QUIT_GRACE_MS : POWERDOWN_GRACE_MS);
      while (this.running && Date.now() < deadline) await sleep(25);
    }
    const below = this.pids.length ? await descendants(this.pids[0]) : [];
    await killAndWait([...new Set([...this.pids, ...below])], o.owner);
    this.pids = [];
    fs.rmSync(this.pidFile, { force: true });
    fs.rmSync(path.dirname(o.qmpSocket), { recursive: true, force: true });
  }
}
