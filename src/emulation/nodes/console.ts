import net from "node:net";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError } from "../../platform/errors.js";

/** True when nothing on this host listens on the port (another program, or another server sharing the host). */
function tcpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * The lowest console port of the configured range that no other node of the compute holds and, for the local
 * compute, that is free on this host (as GNS3's port manager checks). The database's unique (computeId, console)
 * makes a concurrent pick of the same port fail, and the caller retries.
 */
export async function allocateConsolePort(tx: Tx, computeId: string, [lo, hi]: [number, number], host: string): Promise<number> {
  const used = new Set(
    (await tx.node.findMany({ where: { computeId, console: { gte: lo, lte: hi } }, select: { console: true } })).map((n) => n.console),
  );
  for (let port = lo; port <= hi; port++) {
    if (used.has(port)) continue;
    if (computeId !== "local" || (await tcpPortFree(host, port))) return port;
  }
  throw new ConflictError(`No free console port in the range ${lo}-${hi}`);
}

/** A console port chosen by the client must not be held by another node of the compute. */
export async function assertConsoleFree(tx: Tx, computeId: string, port: number, exceptNodeId?: string): Promise<void> {
  const holder = await tx.node.findFirst({ where: { computeId, console: port, NOT: exceptNodeId ? { id: exceptNodeId } : undefined } });
  if (holder) throw new ConflictError(`Console port ${port} is already used by node ${holder.name}`);
}
