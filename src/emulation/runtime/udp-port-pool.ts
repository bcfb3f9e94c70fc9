import dgram from "node:dgram";
import { ConflictError } from "../../platform/errors.js";

/**
 * UDP ports for links and node NIOs, taken from the configured range (ctx.config.udpPorts). A port is handed out
 * once and comes back only through `release`. Blocks (several consecutive ports) exist because vpcs binds its
 * base port *and* base+9. The pool checks with the kernel that a port is really free before handing it out, so
 * ports held by other programs are skipped instead of failing later.
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

  /** One port bound by the caller right away (`bind`) or given to a child process. */
  async allocate(): Promise<number> {
    return this.allocateBlock(1);
  }

  /** `size` consecutive ports; returns the first. */
  async allocateBlock(size: number): Promise<number> {
    const span = this.high - this.low + 1;
    for (let tried = 0; tried < span; tried++) {
      const base = this.next;
      this.next = base + 1 > this.high ? this.low : base + 1;
      if (base + size - 1 > this.high) continue;
      let taken = false;
      for (let p = base; p < base + size; p++) if (this.used.has(p)) taken = true;
      if (taken) continue;
      for (let p = base; p < base + size; p++) this.used.add(p);
      const free = await this.allFree(base, size);
      if (free) {
        this.next = base + size > this.high ? this.low : base + size;
        return base;
      }
      for (let p = base; p < base + size; p++) this.used.delete(p);
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

  release(port: number, size = 1): void {
    for (let p = port; p < port + size; p++) this.used.delete(p);
  }

  private async allFree(base: number, size: number): Promise<boolean> {
    for (let p = base; p < base + size; p++) {
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
