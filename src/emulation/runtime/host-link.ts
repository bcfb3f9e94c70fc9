import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { ConflictError } from "../../platform/core/errors.js";
import { findOnPath } from "../../platform/core/executables.js";
import { interfaceExists, interfaceIndex } from "./host-interfaces.js";
import { socketInodes } from "./listening.js";
import { isAlive, killAndWait, NODE_ENV, OWNER_ENV, sleep, writePidFile } from "./processes.js";
import type { Nio } from "./ethernet.js";

/**
 * One cloud or NAT port joined to the host: a `socat` process (Debian's socat) between the port's UDP NIO (where
 * the link relay delivers and listens, exactly like a switch port) and the host side, frame for frame:
 * - `interface`: an AF_PACKET socket on a host interface (socat's `INTERFACE:`), every frame the interface sees,
 *   in promiscuous mode through a packet membership (PACKET_MR_PROMISC), which the kernel drops with the socket —
 *   nothing is left set on the interface when socat ends, however it ends;
 * - `tap`: a TAP device (socat's `TUN:` with `tun-type=tap`), opened by name: an existing one is attached, a missing
 *   one is created and lives exactly as long as socat holds it (a NAT port's TAP, enslaved to the NAT bridge);
 * - `udp`: a UDP tunnel to another host (GNS3's cloud `udp` port).
 * Node.js has no raw sockets, so this small, well-kept program does the host side; it runs with the least it needs:
 * as `nobody` with only CAP_NET_RAW and CAP_NET_ADMIN (ambient, bounding set reduced to them), its environment only
 * PATH and the runtime's markers, killed by the kernel when the server dies (`setpriv --pdeathsig KILL`), found again
 * by its markers and pid file after a crash (processes.ts).
 */
export type HostSide =
  | { kind: "interface"; name: string }
  | { kind: "tap"; name: string }
  | { kind: "udp"; lport: number; rhost: string; rport: number };

/** Largest frame carried (a UDP datagram on loopback holds up to 65507 bytes). */
const BUFFER = 65535;
const SOL_PACKET = 263;
const PACKET_ADD_MEMBERSHIP = 1;
const PACKET_MR_PROMISC = 1;
const NOBODY = 65534;

export const socatPath = () => findOnPath("socat", process.env.PATCHBAY_SOCAT_PATH);
export const setprivPath = () => findOnPath("setpriv");
export const runningAsRoot = () => process.getuid?.() === 0;

/**
 * Why this host cannot join node ports to its interfaces (socat or setpriv missing, or a server without root), or
 * null. Shared by the cloud and NAT drivers.
 */
export function hostLinkUnavailable(what: string): string | null {
  if (!socatPath()) return `${what} needs socat on this host (Debian package socat) to carry frames to host interfaces`;
  if (!setprivPath()) return `${what} needs setpriv on this host (Debian package util-linux)`;
  if (!runningAsRoot()) return `${what} needs a server running as root: opening host interfaces and TAP devices takes CAP_NET_RAW and CAP_NET_ADMIN`;
  return null;
}

/** `struct packet_mreq` for PACKET_ADD_MEMBERSHIP / PACKET_MR_PROMISC on the interface, in socat's hex notation. */
function promiscMembership(ifindex: number): string {
  const b = Buffer.alloc(16);
  b.writeInt32LE(ifindex, 0);
  b.writeUInt16LE(PACKET_MR_PROMISC, 4);
  return `x${b.toString("hex")}`;
}

/** socat's address of the host side (validated names only: they come from node properties). */
function hostAddress(side: HostSide): string {
  switch (side.kind) {
    case "interface": {
      const index = interfaceIndex(side.name);
      if (!interfaceExists(side.name) || index === null) throw new ConflictError(`Interface '${side.name}' could not be found on this system`);
      return `INTERFACE:${side.name},setsockopt-bin=${SOL_PACKET}:${PACKET_ADD_MEMBERSHIP}:${promiscMembership(index)}`;
    }
    case "tap":
      return `TUN,tun-type=tap,tun-name=${side.name},iff-no-pi,iff-up`;
    case "udp":
      return `UDP-DATAGRAM:${side.rhost}:${side.rport},bind=0.0.0.0:${side.lport}`;
  }
}

export interface HostLinkOptions {
  owner: string;
  nodeId: string;
  /** <dataDir>/run: the pid file `<node>.port<n>.json`. */
  runDir: string;
  port: number;
  /** The port's NIO: socat listens on `local` and sends to `remote` (the link relay), on 127.0.0.1. */
  nio: Nio;
  side: HostSide;
  /** socat ended without being asked (its interface went away): the last thing it said. */
  onExit?(why: string): void;
}

export class HostLink {
  private child?: ChildProcess;
  private exited = false;
  private stopping = false;
  private stderr = "";
  readonly pidFile: string;

  constructor(private readonly o: HostLinkOptions) {
    this.pidFile = path.join(o.runDir, `${o.nodeId}.port${o.port}.json`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !this.exited && this.child?.pid !== undefined && isAlive(this.child.pid);
  }

  get commandLine(): string {
    return this.argv().join(" ");
  }

  private argv(): string[] {
    const socat = socatPath();
    const setpriv = setprivPath();
    if (!socat || !setpriv) throw new ConflictError(hostLinkUnavailable("A cloud or NAT port")!);
    const caps = "-all,+net_raw,+net_admin";
    return [
      setpriv, "--reuid", String(NOBODY), "--regid", String(NOBODY), "--clear-groups",
      "--inh-caps", caps, "--ambient-caps", caps, "--bounding-set", caps, "--pdeathsig", "KILL", "--",
      socat, "-b", String(BUFFER),
      `UDP-DATAGRAM:127.0.0.1:${this.o.nio.remote},bind=127.0.0.1:${this.o.nio.local}`,
      hostAddress(this.o.side),
    ];
  }

  /** Spawns socat; resolves once it holds the host side (a TAP exists), throws 409 with socat's words otherwise. */
  async start(): Promise<void> {
    const argv = this.argv();
    fs.mkdirSync(this.o.runDir, { recursive: true });
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", [OWNER_ENV]: this.o.owner, [NODE_ENV]: this.o.nodeId },
    });
    this.child = child;
    child.stderr!.on("data", (d: Buffer) => void (this.stderr = (this.stderr + d.toString()).slice(-2000)));
    child.once("exit", () => {
      this.exited = true;
      if (!this.stopping) this.o.onExit?.(this.stderr.trim().split("\n").pop() ?? "");
    });
    child.once("error", (e) => {
      this.stderr += String(e);
      this.exited = true;
    });
    if (child.pid !== undefined) {
      writePidFile(this.pidFile, { owner: this.o.owner, nodeId: this.o.nodeId, pids: [child.pid], commandLine: argv.join(" ") });
    }
    // socat fails at once when it cannot open its addresses. Ready means it holds the host side: a TAP exists (it
    // must before it can be enslaved), a packet socket is bound to the interface (frames flow from the answer on).
    const started = Date.now();
    while (!this.exited) {
      await sleep(50);
      const elapsed = Date.now() - started;
      if ((elapsed >= 200 && (await this.holdsHostSide(child.pid))) || elapsed > 3000) break;
    }
    if (this.exited || !(await this.holdsHostSide(child.pid))) {
      this.stopping = true;
      await this.stop();
      const why = this.stderr.trim().split("\n").pop()?.replace(/^.*? E /, "") ?? "";
      throw new ConflictError(`Cannot join port ${this.o.port} to ${describe(this.o.side)}: socat ${why || "did not start"}`);
    }
  }

  private async holdsHostSide(pid: number | undefined): Promise<boolean> {
    const side = this.o.side;
    if (side.kind === "tap") return interfaceExists(side.name);
    if (side.kind === "interface") return pid !== undefined && (await packetSocketBound(pid, interfaceIndex(side.name)));
    return true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const pid = this.child?.pid;
    if (pid !== undefined && !this.exited) await killAndWait([pid], this.o.owner, 1000);
    fs.rmSync(this.pidFile, { force: true });
  }
}

/**
 * The process holds an AF_PACKET socket bound to the interface (/proc/net/packet: its inode, Iface = the index):
 * frames reach it from then on.
 */
async function packetSocketBound(pid: number, ifindex: number | null): Promise<boolean> {
  if (ifindex === null) return false;
  const inodes = new Set(await socketInodes(pid));
  const table = await fsp.readFile("/proc/net/packet", "utf8").catch(() => "");
  return table
    .split("\n")
    .slice(1)
    .some((row) => {
      const cols = row.trim().split(/\s+/);
      return cols.length >= 9 && Number(cols[4]) === ifindex && inodes.has(cols[8]);
    });
}

function describe(side: HostSide): string {
  if (side.kind === "udp") return `UDP ${side.rhost}:${side.rport} (local port ${side.lport})`;
  return `${side.kind === "tap" ? "TAP" : "interface"} ${side.name}`;
}
