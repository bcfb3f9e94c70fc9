import type { Tx } from "../../platform/db/client.js";
import { ConflictError } from "../../platform/errors.js";

/**
 * The lowest console port of the configured range not held by another node of the same compute. The database's
 * unique (computeId, console) makes a concurrent pick of the same port fail, and the caller retries.
 */
export async function allocateConsolePort(tx: Tx, computeId: string, [lo, hi]: [number, number]): Promise<number> {
  const used = await tx.node.findMany({
    where: { computeId, console: { gte: lo, lte: hi } },
    select: { console: true },
    orderBy: { console: "asc" },
  });
  let candidate = lo;
  for (const { console } of used) {
    if (console !== candidate) break;
    candidate++;
  }
  if (candidate > hi) throw new ConflictError(`No free console port in the range ${lo}-${hi}`);
  return candidate;
}

/** A console port chosen by the client must not be held by another node of the compute. */
export async function assertConsoleFree(tx: Tx, computeId: string, port: number, exceptNodeId?: string): Promise<void> {
  const holder = await tx.node.findFirst({ where: { computeId, console: port, NOT: exceptNodeId ? { id: exceptNodeId } : undefined } });
  if (holder) throw new ConflictError(`Console port ${port} is already used by node ${holder.name}`);
}
