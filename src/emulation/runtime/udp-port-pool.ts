import dgram from "node:dgram";
import { ConflictError } from "../../platform/core/errors.js";

/**
 * UDP ports for links and node NIOs, taken from the configured range (ctx.config.udpPorts). A port is handed out
 * once and comes back only through `release`. A caller may need a port together with others at fixed offsets
 * from it (vpcs binds base and base+9, see VPCS_UDP_OFFSETS). The pool checks with the kernel that a port is
 * really free before handing it out, so ports held by other programs are skipped instead of failing later.
 */
export class UdpPortPool {
  private readonly used = new Set<number>();
  private next: number;

  constructor(
    readonly low: number,
    readonly high: number,
    private readonly host = "127.0.0.1",
  ) {
    this.next = low;
  }

  get inUse(): number[] {
    return [...this.used].sort((a, b) => a - b);
  }

  /**
   * A port, and the ports at `offsets` from it (0 is the port itself), all free; returns the port. One port is
   * bound by the caller right away (`bindSocket`) or given to a child process.
   */
  async allocate(offsets: readonly number[] = [0]): Promise<number> {
    const span = this.high - this.low + 1;
    const reach = Math.max(...offsets);
    for (let tried = 0; tried < span; tried++) {
      const base = this.next;
      this.next = base + 1 > this.high ? this.low : base + 1;
      const ports = offsets.map((o) => base + o);
      if (base + reach > this.high || ports.some((p) => this.used.has(p))) continue;
      for (const p of ports) this.used.add(p);
      if (await this.allFree(ports)) return base;
      for (const p of ports) this.used.delete(p);
    }
    throw new ConflictError(`No free UDP port in range ${this.low}-${this.high}`);
  }

  /** Allocates a port and binds a socket to it (retrying if another program grabbed it in between). */
  async bindSocket(): Promise<{ socket: dgram.Socket; port: number }> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const port = await this.allocate();
      const socket = dgram.createSocket("udp4");
      try {
        await bind(socket, port, this.host);
        return { socket, port };
      } catch {
        try {
          socket.close();
        } catch {}
        this.release(port);
      }
    }
    throw new ConflictError(`No free UDP port in range ${this.low}-${this.high}`);
  }

  release(port: number, offsets: readonly number[] = [0]): void {
    for (const o of offsets) this.used.delete(port + o);
  }

  private async allFree(ports: number[]): Promise<boolean> {
    for (const p of ports) {
      // vpcs binds 0.0.0.0, so probe the wildcard address: it conflicts with any specific bind too.
      const s = dgram.createSocket("udp4");
      try {
        await bind(s, p, "0.0.0.0");
      } catch {
        return false;
      } finally {
        await new Promise<void>((r) => {
          try {
            s.close(() => r());
          } catch {
            r();
          }
        });
      }
    }
    return true;
  }
}

export function bind(socket: dgram.Socket, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    socket.once("error", onError);
    socket.bind(port, host, () => {
      socket.off("error", onError);
      resolve();
    });
  });
}
