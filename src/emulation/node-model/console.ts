import net from "node:net";
import type { Tx } from "../../platform/db/client.js";
import type { Config } from "../../platform/config.js";
import { ConflictError } from "../../platform/core/errors.js";

/**
 * Console ports are a lifecycle, as in GNS3's port manager: a node holds its port while its project is open and
 * gives it back when the project closes or the node is deleted (the row goes). A closed project's nodes keep
 * reporting their last port, as GNS3 reports the `console` of its .gns3; opening takes the ports again.
 */

type ConsoleRange = Pick<Config, "consolePorts" | "host">;

/** The node columns for a console port held from now on (none held for no port). */
export const heldConsole = (console: number | null) => ({ console, consoleHeld: console === null ? null : true });

/** True when nothing on this host listens on the port (another program, or another server sharing the host). */
function tcpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

async function heldPorts(tx: Tx, computeId: string): Promise<Set<number>> {
  const rows = await tx.node.findMany({ where: { computeId, consoleHeld: true }, select: { console: true } });
  return new Set(rows.map((n) => n.console!));
}

/**
 * Takes ports of one compute: a port is usable when no node holds it and, for the local compute, nothing on this
 * host listens on it (as GNS3's port manager checks). What it takes counts as held for its next picks. The
 * database's unique (computeId, console, consoleHeld) makes a concurrent pick of the same port fail, and the
 * caller retries.
 */
function portPicker(held: Set<number>, computeId: string, { consolePorts: [lo, hi], host }: ConsoleRange) {
  const usable = async (port: number) => !held.has(port) && (computeId !== "local" || (await tcpPortFree(host, port)));
  return {
    /** Takes the port if it is usable; false when it is not. */
    async keep(port: number): Promise<boolean> {
      if (!(await usable(port))) return false;
      held.add(port);
      return true;
    },
    /** Takes the lowest usable port of the range. */
    async lowest(): Promise<number> {
      for (let port = lo; port <= hi; port++) if (await this.keep(port)) return port;
      throw new ConflictError(`No free console port in the range ${lo}-${hi}`);
    },
  };
}

/** A console port for a new node of an open project. */
export async function allocateConsolePort(tx: Tx, computeId: string, range: ConsoleRange): Promise<number> {
  return portPicker(await heldPorts(tx, computeId), computeId, range).lowest();
}

/** A console port chosen by the client must not be held by another node of the compute. */
export async function assertConsoleFree(tx: Tx, computeId: string, port: number, exceptNodeId?: string): Promise<void> {
  const holder = await consoleHolder(tx, computeId, port, exceptNodeId);
  if (holder) throw new ConflictError(`Console port ${port} is already used by node ${holder.name}`);
}

/** The node (of an open project) that holds the port on the compute, if any. */
export function consoleHolder(tx: Tx, computeId: string, port: number, exceptNodeId?: string) {
  return tx.node.findFirst({
    where: { computeId, console: port, consoleHeld: true, NOT: exceptNodeId ? { id: exceptNodeId } : undefined },
    select: { id: true, name: true },
  });
}

/**
 * Opening a project: each of its nodes takes its console port again, re-checked against the other nodes of its
 * compute and the host. A node keeps its previous port when it is still free, so a lab re-opened on the same
 * machine keeps its ports; a node whose port was taken meanwhile gets the lowest free one (GNS3's compute does
 * the same with a port in use). Kept ports are taken first, so a moved node never takes a port its neighbour
 * could have kept.
 */
export async function holdProjectConsoles(tx: Tx, projectId: string, range: ConsoleRange): Promise<void> {
  const nodes = await tx.node.findMany({
    where: { projectId, console: { not: null }, consoleHeld: null },
    select: { id: true, computeId: true, console: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const pickers = new Map<string, ReturnType<typeof portPicker>>();
  const pickerOf = async (computeId: string) => {
    let pick = pickers.get(computeId);
    if (!pick) pickers.set(computeId, (pick = portPicker(await heldPorts(tx, computeId), computeId, range)));
    return pick;
  };
  const kept: string[] = [];
  const moved: string[] = [];
  for (const n of nodes) ((await (await pickerOf(n.computeId)).keep(n.console!)) ? kept : moved).push(n.id);
  await tx.node.updateMany({ where: { id: { in: kept } }, data: { consoleHeld: true } });
  for (const n of nodes.filter((n) => moved.includes(n.id))) {
    await tx.node.update({ where: { id: n.id }, data: heldConsole(await (await pickerOf(n.computeId)).lowest()) });
  }
}

/** Closing a project gives its nodes' console ports back to their computes (the nodes keep reporting them). */
export async function releaseProjectConsoles(tx: Tx, projectId: string): Promise<void> {
  await tx.node.updateMany({ where: { projectId, consoleHeld: true }, data: { consoleHeld: null } });
}
