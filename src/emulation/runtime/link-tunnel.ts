import dgram from "node:dgram";
import { bind } from "./udp-port-pool.js";
import type { PcapWriter } from "./pcap.js";

/**
 * A link on the wire: GNS3 joins two node ports with a UDP tunnel (each side sends to the other's port). Here a
 * tiny relay sits in the middle with one socket per side: node A sends to `a.listen`, the relay forwards the
 * datagram to node B's `b.deliver` from `b.listen` (so B's replies come back to the relay), and the other way
 * round. Being in the middle is what lets `suspend`, the link filters and packet capture act on real traffic.
 */
export interface TunnelSide {
  /** UDP port the relay listens on (the node sends its frames here). */
  listen: number;
  /** UDP port the node listens on (the relay delivers frames there). */
  deliver: number;
  /** Where that node is, when it is on another host (a compute's NIO); default: the tunnel's host. */
  host?: string;
  /** Address to listen on for this side, when other hosts must reach it; default: the tunnel's host. */
  bind?: string;
}

/** The reference's link filters; values as in the link object (`{"delay": [10, 2]}`). */
export type LinkFilters = Record<string, unknown[]>;

export const SUPPORTED_FILTERS = ["frequency_drop", "packet_loss", "delay", "corrupt"] as const;

interface Compiled {
  frequencyDrop: number;
  packetLoss: number;
  delay: number;
  jitter: number;
  corrupt: number;
}

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v)) || 0;

function compile(filters: LinkFilters): Compiled {
  return {
    frequencyDrop: num(filters.frequency_drop?.[0]),
    packetLoss: Math.max(0, Math.min(100, num(filters.packet_loss?.[0]))),
    delay: Math.max(0, num(filters.delay?.[0])),
    jitter: Math.max(0, num(filters.delay?.[1])),
    corrupt: Math.max(0, Math.min(100, num(filters.corrupt?.[0]))),
  };
}

export interface TunnelStats {
  forwarded: number;
  dropped: number;
}

export class LinkTunnel {
  private sockA = dgram.createSocket("udp4");
  private sockB = dgram.createSocket("udp4");
  private filters: Compiled = compile({});
  private suspended = false;
  private counter = 0;
  private capture: PcapWriter | undefined;
  private timers = new Set<NodeJS.Timeout>();
  private closed = false;
  readonly stats: TunnelStats = { forwarded: 0, dropped: 0 };

  constructor(
    readonly a: TunnelSide,
    readonly b: TunnelSide,
    private readonly host = "127.0.0.1",
  ) {}

  async open(): Promise<this> {
    try {
      await bind(this.sockA, this.a.listen, this.a.bind ?? this.host);
      await bind(this.sockB, this.b.listen, this.b.bind ?? this.host);
    } catch (e) {
      this.close();
      throw e;
    }
    this.sockA.on("message", (msg) => this.forward(msg, this.sockB, this.b));
    this.sockB.on("message", (msg) => this.forward(msg, this.sockA, this.a));
    // A node that is not listening yet answers with ICMP port unreachable; that must not kill the relay.
    this.sockA.on("error", () => {});
    this.sockB.on("error", () => {});
    return this;
  }

  setFilters(filters: LinkFilters): void {
    this.filters = compile(filters);
  }

  /** Suspend = the reference's `frequency_drop: [-1]` on the wire while the configured filters are kept. */
  setSuspended(on: boolean): void {
    this.suspended = on;
  }

  startCapture(writer: PcapWriter): void {
    this.capture = writer;
  }

  stopCapture(): PcapWriter | undefined {
    const w = this.capture;
    this.capture = undefined;
    return w;
  }

  get capturing(): boolean {
    return this.capture !== undefined;
  }

  private forward(msg: Buffer, out: dgram.Socket, to: TunnelSide): void {
    if (this.closed) return;
    const f = this.filters;
    this.counter++;
    if (this.suspended || f.frequencyDrop === -1 || (f.frequencyDrop > 0 && this.counter % f.frequencyDrop === 0)) {
      this.stats.dropped++;
      return;
    }
    if (f.packetLoss > 0 && Math.random() * 100 < f.packetLoss) {
      this.stats.dropped++;
      return;
    }
    let frame = msg;
    if (f.corrupt > 0 && frame.length > 0 && Math.random() * 100 < f.corrupt) {
      frame = Buffer.from(frame);
      frame[Math.floor(Math.random() * frame.length)] ^= 0xff;
    }
    const send = () => {
      if (this.closed) return;
      this.capture?.write(frame);
      this.stats.forwarded++;
      out.send(frame, to.deliver, to.host ?? this.host);
    };
    const wait = f.delay + (f.jitter ? Math.round((Math.random() * 2 - 1) * f.jitter) : 0);
    if (wait <= 0) return send();
    const t = setTimeout(() => {
      this.timers.delete(t);
      send();
    }, wait);
    this.timers.add(t);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const s of [this.sockA, this.sockB]) {
      try {
        s.close();
      } catch {}
    }
  }
}
