import { randomBytes } from "node:crypto";
import { ConflictError } from "../../platform/core/errors.js";
import type { Nio, PortDevice } from "./ethernet.js";
import { interfaceExists, isBridge } from "./host-interfaces.js";
import { HostLink, type HostSide } from "./host-link.js";
import { joinBridge, type NatNetwork } from "./nat-network.js";

/**
 * A cloud or NAT node as this compute runs it: each linked port is one HostLink (a socat process, host-link.ts)
 * between the port's UDP NIO and the host side its mapping names, as GNS3's uBridge joins them:
 * - an ethernet port on an ordinary interface: a packet socket on it;
 * - an ethernet port on a Linux bridge: a TAP of its own enslaved to that bridge (GNS3's `gns3tap…`);
 * - a tap port: that TAP (created if missing, then living as long as the link);
 * - a udp port: a UDP tunnel;
 * - the NAT port: a TAP enslaved to the NAT network's bridge (nat-network.ts), which exists while a NAT port uses it.
 * Nothing is bound before a link asks for it, and every port's process goes with its link, the node, the project and
 * the server.
 */
export type HostPortTarget = HostSide | { kind: "nat" };

interface Held {
  link: HostLink;
  nio: Nio;
  /** The port holds the NAT network (released with it). */
  nat: boolean;
}

export interface HostPortDeviceOptions {
  owner: string;
  runDir: string;
  nodeId: string;
  nodeName: string;
  nat: NatNetwork;
  /** The target of a port now (the node's mapping), or undefined for a port it does not have. */
  target(port: number): HostPortTarget | undefined;
  /** Why no port may be bound now (local mode off, a program missing), or null: checked at every bind. */
  refusal(port: number): string | null;
  log: { error(msg: string, data?: object): void };
}

/** A cloud or NAT node's device: the compute's environment, and what its driver knows of the node's ports. */
export function hostPortDevice(
  node: { id: string; name: string },
  env: { owner: string; runDir: string; nat: NatNetwork; ctx: { log: HostPortDeviceOptions["log"] } },
  ports: Pick<HostPortDeviceOptions, "target" | "refusal">,
): HostPortDevice {
  return new HostPortDevice({ owner: env.owner, runDir: env.runDir, nodeId: node.id, nodeName: node.name, nat: env.nat, log: env.ctx.log, ...ports });
}

/** A TAP name of our own: `pbt` + 8 hex characters (interface names have at most 15). */
const tapName = () => `pbt${randomBytes(4).toString("hex")}`;

export class HostPortDevice implements PortDevice {
  private ports = new Map<number, Held>();
  /**
   * A port's bind in flight (socat takes a moment to hold its side): a removal or close waits for it, so a link
   * deleted or a project closed meanwhile never leaves a socat behind.
   */
  private binding = new Map<number, Promise<void>>();

  constructor(private readonly o: HostPortDeviceOptions) {}

  /** Bound ports and those being bound (the device is not closed under a bind in flight). */
  get connectedPorts(): number[] {
    return [...new Set([...this.ports.keys(), ...this.binding.keys()])].sort((a, b) => a - b);
  }

  /** The helper processes (diagnostics, tests). */
  get pids(): number[] {
    return [...this.ports.values()].map((h) => h.link.pid).filter((p): p is number => p !== undefined);
  }

  async addNio(port: number, nio: Nio): Promise<void> {
    const before = this.binding.get(port);
    const bind = (async () => {
      await before?.catch(() => undefined);
      await this.unbind(port);
      await this.bind(port, nio);
    })();
    this.binding.set(port, bind);
    try {
      await bind;
    } finally {
      if (this.binding.get(port) === bind) this.binding.delete(port);
    }
  }

  private async bind(port: number, nio: Nio): Promise<void> {
    const refusal = this.o.refusal(port);
    if (refusal) throw new ConflictError(refusal);
    const target = this.o.target(port);
    if (!target) throw new ConflictError(`Port ${port} doesn't exist on cloud '${this.o.nodeName}'`);
    if (target.kind === "interface" && !interfaceExists(target.name)) throw this.missing(target.name);
    let bridge: string | undefined;
    let side: HostSide;
    const nat = target.kind === "nat";
    if (target.kind === "nat") {
      bridge = await this.o.nat.acquire();
      side = { kind: "tap", name: tapName() };
    } else if (target.kind === "interface" && isBridge(target.name)) {
      bridge = target.name;
      side = { kind: "tap", name: tapName() };
    } else side = target;
    const onExit = (why: string) =>
      this.o.log.error(`runtime: port ${port} of ${this.o.nodeName} left its host side (a start joins it again)`, { node: this.o.nodeId, why });
    const link = new HostLink({ owner: this.o.owner, runDir: this.o.runDir, nodeId: this.o.nodeId, port, nio, side, onExit });
    try {
      await link.start();
      if (bridge && side.kind === "tap") await joinBridge(side.name, bridge);
    } catch (e) {
      await link.stop();
      if (nat) await this.o.nat.release();
      throw e;
    }
    this.ports.set(port, { link, nio, nat });
  }

  /**
   * A start (GNS3: restart uBridge and re-add every NIO): a port whose socat ended (its interface went away, say) is
   * joined again; an ethernet port whose interface is gone answers GNS3's 409.
   */
  async revive(): Promise<void> {
    for (const [port, held] of [...this.ports]) {
      if (held.link.running) continue;
      const target = this.o.target(port);
      if (target?.kind === "interface" && !interfaceExists(target.name)) throw this.missing(target.name);
      await this.addNio(port, held.nio);
    }
  }

  /** GNS3's words for a port whose interface is not on this host. */
  private missing(name: string): ConflictError {
    return new ConflictError(`Interface '${name}' could not be found on this system, please update '${this.o.nodeName}'`);
  }

  async removeNio(port: number): Promise<void> {
    await this.binding.get(port)?.catch(() => undefined);
    await this.unbind(port);
  }

  private async unbind(port: number): Promise<void> {
    const held = this.ports.get(port);
    if (!held) return;
    this.ports.delete(port);
    await held.link.stop();
    if (held.nat) await this.o.nat.release();
  }

  async close(): Promise<void> {
    for (const port of this.connectedPorts) await this.removeNio(port);
  }
}
