import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ConflictError } from "../../platform/core/errors.js";
import { findOnPath } from "../../platform/core/executables.js";
import { hostIpv4Networks, INTERFACE_NAME, interfaceExists, isBridge } from "./host-interfaces.js";
import { isAlive, killAndWait, NODE_ENV, OWNER_ENV, sleep, writePidFile } from "./processes.js";

/**
 * The network NAT nodes lead into. GNS3 joins a NAT port to libvirt's `virbr0` and lets libvirt's dnsmasq and rules
 * serve it. Patchbay does the same when that interface (`--nat-interface`) is a bridge on this host. Otherwise it
 * provides its own, on demand: the bridge `--nat-bridge` (default pbnat0) with the first address of `--nat-subnet`
 * (default 192.168.122.0/24, libvirt's, which GNS3 labs expect), Debian's dnsmasq serving DHCP on it (no DNS; as
 * nobody with three capabilities, dying with the server), and
 * an nftables table masquerading what leaves the subnet. It is made when the first NAT port is linked and removed
 * when the last one goes, at shutdown, and after a crash at the next start (the state file `<runDir>/nat-network.state`
 * says what this server made). IPv4 forwarding is switched on only when it was off, then restricted by the same
 * table to the lab's traffic, and switched off again with the bridge.
 */
export interface NatSettings {
  /** GNS3's `default_nat_interface`: used as it is when it is a bridge here (libvirt's virbr0). */
  natInterface: string;
  /** Patchbay's own bridge, made when natInterface is absent. */
  bridge: string;
  /** Its IPv4 subnet, `a.b.c.d/len`, private, 16 ≤ len ≤ 29. */
  subnet: string;
}

interface OwnState {
  owner: string;
  bridge: string;
  table: string;
  /** IPv4 forwarding was off and this server switched it on. */
  forwardingSwitchedOn: boolean;
}

type Log = { info(msg: string, data?: object): void; error(msg: string, data?: object): void };

const FORWARD_SYSCTL = "/proc/sys/net/ipv4/ip_forward";
const DNSMASQ_NODE = "nat-network";

const ipToInt = (ip: string) => ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
const intToIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

/** The subnet's network, gateway (first address), DHCP range and prefix; throws on a malformed or public one. */
export function parseNatSubnet(subnet: string) {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(subnet);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255)) throw new ConflictError(`NAT subnet ${subnet} is not an IPv4 subnet a.b.c.d/len`);
  const prefix = Number(m[5]);
  if (prefix < 16 || prefix > 29) throw new ConflictError(`NAT subnet ${subnet}: the prefix length must be between 16 and 29`);
  const size = 2 ** (32 - prefix);
  const network = Math.floor(ipToInt(m.slice(1, 5).join(".")) / size) * size;
  const first = Math.floor(network / 2 ** 24);
  const second = Math.floor(network / 2 ** 16) % 256;
  const isPrivate = first === 10 || (first === 172 && second >= 16 && second <= 31) || (first === 192 && second === 168);
  if (!isPrivate) throw new ConflictError(`NAT subnet ${subnet} is not in a private range (10/8, 172.16/12, 192.168/16)`);
  return {
    cidr: `${intToIp(network)}/${prefix}`,
    prefix,
    network,
    size,
    gateway: intToIp(network + 1),
    rangeStart: intToIp(network + 2),
    rangeEnd: intToIp(network + size - 2),
    netmask: intToIp(2 ** 32 - size),
  };
}

/** Why NAT ports cannot be joined with these settings (the programs Patchbay's own bridge needs), or null. */
export function natUnavailable(settings: NatSettings): string | null {
  if (isBridge(settings.natInterface)) return null;
  for (const [tool, pkg] of [["ip", "iproute2"], ["dnsmasq", "dnsmasq-base"], ["nft", "nftables"]]) {
    if (!findOnPath(tool) && !findOnPath(tool, `/usr/sbin/${tool}`)) {
      return `NAT nodes need ${settings.natInterface} (libvirt) or, for Patchbay's own NAT bridge, ${tool} (Debian package ${pkg}) on this host`;
    }
  }
  if (!INTERFACE_NAME.test(settings.bridge)) return `NAT bridge name ${settings.bridge} is not a valid interface name`;
  try {
    parseNatSubnet(settings.subnet);
  } catch (e) {
    return (e as Error).message;
  }
  return null;
}

/** The nftables table of a bridge: masquerade what leaves the subnet; forward only the lab's traffic. */
export function natRuleset(table: string, bridge: string, cidr: string, dropOtherForwarding: boolean): string {
  return [
    `table ip ${table} {`,
    "  chain postrouting {",
    "    type nat hook postrouting priority srcnat; policy accept;",
    `    ip saddr ${cidr} ip daddr != ${cidr} masquerade`,
    "  }",
    "  chain forward {",
    "    type filter hook forward priority filter; policy accept;",
    `    iifname "${bridge}" ip saddr ${cidr} accept`,
    `    oifname "${bridge}" ct state established,related accept`,
    `    iifname "${bridge}" drop`,
    `    oifname "${bridge}" drop`,
    // This server switched forwarding on for its lab: nothing else of the host is forwarded because of it.
    ...(dropOtherForwarding ? ["    drop"] : []),
    "  }",
    "}",
    "",
  ].join("\n");
}

function run(cmd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { timeout: 10_000 }, (err, stdout, stderr) => {
      if (err) reject(new ConflictError(`${path.basename(cmd)} ${args.join(" ")} failed: ${(stderr || String(err)).trim().slice(0, 300)}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

export class NatNetwork {
  private users = 0;
  private state?: OwnState;
  private dnsmasq?: ChildProcess;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly stateFile: string;
  private readonly dnsmasqPidFile: string;

  constructor(
    private readonly settings: NatSettings,
    private readonly owner: string,
    private readonly runDir: string,
    private readonly log: Log,
  ) {
    this.stateFile = path.join(runDir, "nat-network.state");
    this.dnsmasqPidFile = path.join(runDir, `${DNSMASQ_NODE}.json`);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => {});
    return next;
  }

  /** libvirt's bridge (or the configured NAT interface) is here: NAT ports join it and this server adds nothing. */
  private usesHostBridge(): boolean {
    return isBridge(this.settings.natInterface);
  }

  /** The interface NAT ports join (shown in a NAT node's ports mapping). */
  interfaceName(): string {
    return this.usesHostBridge() ? this.settings.natInterface : this.settings.bridge;
  }

  get table(): string {
    return `patchbay_${this.settings.bridge.replace(/[^A-Za-z0-9_]/g, "_")}`;
  }

  /** Why NAT nodes cannot run here (what Patchbay's own bridge needs), or null. */
  unavailable(): string | null {
    return this.state ? null : natUnavailable(this.settings);
  }

  private tool(name: string): string {
    return findOnPath(name) ?? findOnPath(name, `/usr/sbin/${name}`) ?? name;
  }

  /** A NAT port is being joined: returns the bridge to enslave its TAP to (made now if it is Patchbay's). */
  acquire(): Promise<string> {
    return this.serial(async () => {
      if (this.usesHostBridge() && !this.state) return this.settings.natInterface;
      const reason = this.unavailable();
      if (reason) throw new ConflictError(reason);
      if (!this.state) await this.create();
      this.users++;
      return this.settings.bridge;
    });
  }

  /** A NAT port is gone: the last one takes Patchbay's bridge, DHCP and rules with it. */
  release(): Promise<void> {
    return this.serial(async () => {
      if (!this.state) return;
      this.users = Math.max(0, this.users - 1);
      if (this.users === 0) await this.teardown();
    });
  }

  get active(): boolean {
    return this.state !== undefined;
  }

  /**
   * Why a NAT port could not be joined now (checked before a link is recorded): what the programs need
   * (natUnavailable), and for a bridge still to be made, its name taken by another interface or its subnet
   * overlapping a network of the host. Null when it can, or when the bridge is up already.
   */
  problem(): string | null {
    if (this.usesHostBridge() || this.state) return null;
    const missing = natUnavailable(this.settings);
    if (missing) return missing;
    const net = parseNatSubnet(this.settings.subnet);
    const { bridge } = this.settings;
    if (interfaceExists(bridge)) {
      return `Cannot make the NAT bridge ${bridge}: an interface of that name exists and is not this server's (choose another with --nat-bridge)`;
    }
    const clash = hostIpv4Networks().find((a) => {
      const size = 2 ** (32 - Math.min(a.prefix, net.prefix));
      return Math.floor(ipToInt(a.address) / size) === Math.floor(net.network / size);
    });
    if (clash) return `NAT subnet ${net.cidr} overlaps this host's network ${clash.address}/${clash.prefix} (choose another with --nat-subnet)`;
    return null;
  }

  private async create(): Promise<void> {
    const problem = this.problem();
    if (problem) throw new ConflictError(problem);
    const net = parseNatSubnet(this.settings.subnet);
    const { bridge } = this.settings;
    const forwardingOff = fs.readFileSync(FORWARD_SYSCTL, "utf8").trim() === "0";
    const state: OwnState = { owner: this.owner, bridge, table: this.table, forwardingSwitchedOn: false };
    fs.mkdirSync(this.runDir, { recursive: true });
    // Written first: whatever part exists after a crash is taken down at the next start.
    fs.writeFileSync(this.stateFile, JSON.stringify(state));
    this.state = state;
    try {
      const ip = this.tool("ip");
      await run(ip, ["link", "add", bridge, "type", "bridge"]);
      await run(ip, ["addr", "add", `${net.gateway}/${net.prefix}`, "dev", bridge]);
      await run(ip, ["link", "set", bridge, "up"]);
      await this.startDnsmasq(net);
      await run(this.tool("nft"), ["-f", "-"], natRuleset(state.table, bridge, net.cidr, forwardingOff));
      if (forwardingOff) {
        try {
          fs.writeFileSync(FORWARD_SYSCTL, "1");
          state.forwardingSwitchedOn = true;
          fs.writeFileSync(this.stateFile, JSON.stringify(state));
        } catch (e) {
          this.log.error("nat: IPv4 forwarding could not be switched on: NAT nodes get DHCP and reach the host, not beyond", { error: String(e) });
        }
      }
      this.log.info("nat: bridge up", { bridge, subnet: net.cidr, gateway: net.gateway });
    } catch (e) {
      await this.teardown();
      throw e;
    }
  }

  private async startDnsmasq(net: ReturnType<typeof parseNatSubnet>): Promise<void> {
    const { bridge } = this.settings;
    // As nobody from the start, with only what DHCP on one interface takes (port 67, the interface binding, the ARP
    // entry of an offer), killed by the kernel when the server dies; leases are kept in memory (no file to write).
    const caps = "-all,+net_bind_service,+net_raw,+net_admin";
    const args = [
      "--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps", caps, "--ambient-caps", caps, "--bounding-set", caps,
      "--pdeathsig", "KILL", "--", this.tool("dnsmasq"),
      "--keep-in-foreground", "--conf-file=/dev/null", "--no-hosts", "--no-resolv", "--port=0",
      `--interface=${bridge}`, "--except-interface=lo", "--bind-dynamic", "--dhcp-authoritative", "--log-facility=-",
      `--dhcp-range=${net.rangeStart},${net.rangeEnd},${net.netmask},1h`, `--dhcp-option=option:router,${net.gateway}`,
      "--leasefile-ro", "--pid-file=",
    ];
    const child = spawn(this.tool("setpriv"), args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", [OWNER_ENV]: this.owner, [NODE_ENV]: DNSMASQ_NODE },
    });
    let stderr = "";
    let exited = false;
    child.stderr!.on("data", (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-2000)));
    child.once("exit", () => void (exited = true));
    child.once("error", (e) => {
      stderr += String(e);
      exited = true;
    });
    this.dnsmasq = child;
    if (child.pid !== undefined) writePidFile(this.dnsmasqPidFile, { owner: this.owner, nodeId: DNSMASQ_NODE, pids: [child.pid], commandLine: args.join(" ") });
    for (let i = 0; i < 10 && !exited; i++) await sleep(50); // dnsmasq exits at once when it cannot serve the bridge
    if (exited) throw new ConflictError(`dnsmasq did not start on the NAT bridge ${bridge}: ${stderr.trim().split("\n").pop() ?? ""}`);
  }

  /** Takes down what this server made (whatever part of it exists). */
  private async teardown(): Promise<void> {
    const state = this.state;
    this.state = undefined;
    this.users = 0;
    const pid = this.dnsmasq?.pid;
    this.dnsmasq = undefined;
    if (pid !== undefined && isAlive(pid)) await killAndWait([pid], this.owner, 1000);
    fs.rmSync(this.dnsmasqPidFile, { force: true });
    if (state) await this.undo(state);
  }

  private async undo(state: OwnState): Promise<void> {
    await run(this.tool("nft"), ["delete", "table", "ip", state.table]).catch(() => {});
    if (state.forwardingSwitchedOn) {
      try {
        fs.writeFileSync(FORWARD_SYSCTL, "0");
      } catch {}
    }
    if (interfaceExists(state.bridge)) {
      await run(this.tool("ip"), ["link", "del", state.bridge]).catch((e) => this.log.error("nat: bridge not removed", { error: String(e) }));
    }
    fs.rmSync(this.stateFile, { force: true });
    this.log.info("nat: bridge removed", { bridge: state.bridge });
  }

  /** Start-up: what a previous run of this data directory left (its dnsmasq is killed by recoverLeftovers) goes. */
  async recover(): Promise<void> {
    let state: OwnState;
    try {
      state = JSON.parse(fs.readFileSync(this.stateFile, "utf8")) as OwnState;
    } catch {
      return;
    }
    if (state.owner !== this.owner) return;
    this.log.info("nat: removing the NAT bridge a previous run left", { bridge: state.bridge });
    await this.undo(state);
  }

  /** Shutdown. */
  stop(): Promise<void> {
    return this.serial(() => this.teardown());
  }
}

/** Enslaves a TAP (held by its socat) to a bridge and brings it up; it leaves the bridge when the TAP goes. */
export async function joinBridge(tap: string, bridge: string): Promise<void> {
  const ip = findOnPath("ip") ?? findOnPath("ip", "/usr/sbin/ip") ?? "ip";
  await run(ip, ["link", "set", "dev", tap, "master", bridge, "up"]);
}

/** The interface NAT ports join with these settings (a NAT node's ports mapping names it). */
export const natInterfaceFor = (s: NatSettings) => (isBridge(s.natInterface) ? s.natInterface : s.bridge);
