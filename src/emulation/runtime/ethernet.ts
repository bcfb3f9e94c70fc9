import dgram from "node:dgram";
import { bind } from "./udp-port-pool.js";

/**
 * The builtin ethernet_hub and ethernet_switch, forwarding frames in-process between UDP NIOs (one socket per
 * connected port: frames arrive on `local`, leave towards `remote`). The hub floods. The switch learns source
 * MACs per VLAN and honours `ports_mapping`: `access` ports carry untagged frames of one VLAN, `dot1q` ports
 * carry 802.1Q-tagged frames (the native VLAN — the port's `vlan` — untagged), `qinq` ports add an outer tag.
 */
export interface PortMapping {
  name?: string;
  port_number: number;
  type?: "access" | "dot1q" | "qinq" | string;
  vlan?: number;
  ethertype?: string;
}

export interface Nio {
  local: number;
  remote: number;
}

/** What the compute asks of a device node: a UDP NIO per linked port (EthernetDevice, HostPortDevice). */
export interface PortDevice {
  addNio(portNumber: number, nio: Nio): Promise<void>;
  removeNio(portNumber: number): Promise<void>;
  readonly connectedPorts: number[];
  close(): Promise<void>;
  /** The node is started: what should run and does not any more is restarted (GNS3 re-adds a cloud's NIOs); throws 409. */
  revive?(): Promise<void>;
}

interface Port {
  number: number;
  nio: Nio;
  socket: dgram.Socket;
}

const TPID_8021Q = 0x8100;
const MAC_AGE_MS = 300_000;

export interface EthernetStats {
  received: number;
  sent: number;
}

export abstract class EthernetDevice implements PortDevice {
  protected ports = new Map<number, Port>();
  readonly stats: EthernetStats = { received: 0, sent: 0 };

  constructor(protected readonly host = "127.0.0.1") {}

  /** Binds a NIO on a port (replacing an existing one). */
  async addNio(portNumber: number, nio: Nio): Promise<void> {
    await this.removeNio(portNumber);
    const socket = dgram.createSocket("udp4");
    await bind(socket, nio.local, this.host);
    socket.on("error", () => {});
    const port: Port = { number: portNumber, nio, socket };
    socket.on("message", (frame) => {
      this.stats.received++;
      this.receive(port, frame);
    });
    this.ports.set(portNumber, port);
  }

  async removeNio(portNumber: number): Promise<void> {
    const p = this.ports.get(portNumber);
    if (!p) return;
    this.ports.delete(portNumber);
    this.forgetPort(portNumber);
    await new Promise<void>((r) => {
      try {
        p.socket.close(() => r());
      } catch {
        r();
      }
    });
  }

  get connectedPorts(): number[] {
    return [...this.ports.keys()].sort((a, b) => a - b);
  }

  nio(portNumber: number): Nio | undefined {
    return this.ports.get(portNumber)?.nio;
  }

  async close(): Promise<void> {
    for (const n of [...this.ports.keys()]) await this.removeNio(n);
  }

  protected send(port: Port, frame: Buffer): void {
    this.stats.sent++;
    port.socket.send(frame, port.nio.remote, this.host);
  }

  protected abstract receive(port: Port, frame: Buffer): void;
  protected forgetPort(_portNumber: number): void {}
}

export class EthernetHub extends EthernetDevice {
  protected receive(from: Port, frame: Buffer): void {
    for (const p of this.ports.values()) if (p !== from) this.send(p, frame);
  }
}

interface MacEntry {
  port: number;
  seen: number;
}

export class EthernetSwitch extends EthernetDevice {
  private mapping = new Map<number, PortMapping>();
  /** `${vlan}/${mac}` → port */
  private macs = new Map<string, MacEntry>();

  constructor(mapping: PortMapping[], host?: string) {
    super(host);
    this.setMapping(mapping);
  }

  setMapping(mapping: PortMapping[]): void {
    this.mapping = new Map(mapping.map((m) => [m.port_number, m]));
    this.macs.clear();
  }

  /** The MAC table as `{vlan, mac, port}` (for diagnostics and tests). */
  macTable(): { vlan: number; mac: string; port: number }[] {
    return [...this.macs.entries()].map(([k, e]) => {
      const [vlan, mac] = k.split("/");
      return { vlan: Number(vlan), mac, port: e.port };
    });
  }

  protected forgetPort(portNumber: number): void {
    for (const [k, e] of this.macs) if (e.port === portNumber) this.macs.delete(k);
  }

  private portConfig(n: number): { type: string; vlan: number } {
    const m = this.mapping.get(n);
    return { type: m?.type ?? "access", vlan: typeof m?.vlan === "number" ? m.vlan : 1 };
  }

  protected receive(from: Port, frame: Buffer): void {
    if (frame.length < 14) return;
    const cfg = this.portConfig(from.number);
    // Classify: which VLAN does the frame belong to, and what is the untagged frame?
    let vlan: number;
    let untagged: Buffer;
    const tagged = frame.readUInt16BE(12) === TPID_8021Q && frame.length >= 18;
    if (cfg.type === "dot1q") {
      if (tagged) {
        vlan = frame.readUInt16BE(14) & 0x0fff;
        untagged = Buffer.concat([frame.subarray(0, 12), frame.subarray(16)]);
      } else {
        vlan = cfg.vlan;
        untagged = frame;
      }
    } else if (cfg.type === "qinq") {
      // The whole frame (customer tags included) travels inside the port's VLAN.
      vlan = cfg.vlan;
      untagged = frame;
    } else {
      if (tagged) return; // access ports drop tagged frames
      vlan = cfg.vlan;
      untagged = frame;
    }
    const dst = untagged.subarray(0, 6).toString("hex");
    const src = untagged.subarray(6, 12).toString("hex");
    const now = Date.now();
    if ((untagged[6] & 1) === 0) this.macs.set(`${vlan}/${src}`, { port: from.number, seen: now });

    const known = (untagged[0] & 1) === 0 ? this.macs.get(`${vlan}/${dst}`) : undefined;
    if (known && now - known.seen < MAC_AGE_MS) {
      if (known.port === from.number) return;
      const out = this.ports.get(known.port);
      if (out) this.emit(out, vlan, untagged);
      return;
    }
    for (const p of this.ports.values()) if (p !== from) this.emit(p, vlan, untagged);
  }

  private emit(port: Port, vlan: number, untagged: Buffer): void {
    const cfg = this.portConfig(port.number);
    if (cfg.type === "dot1q") {
      if (vlan === cfg.vlan) return this.send(port, untagged);
      const tag = Buffer.alloc(4);
      tag.writeUInt16BE(TPID_8021Q, 0);
      tag.writeUInt16BE(vlan & 0x0fff, 2);
      return this.send(port, Buffer.concat([untagged.subarray(0, 12), tag, untagged.subarray(12)]));
    }
    if (vlan !== cfg.vlan) return;
    this.send(port, untagged);
  }
}
