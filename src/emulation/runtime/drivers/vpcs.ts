import type { Node } from "../../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../../platform/context.js";
import { nodeProperties } from "../../node-model/serialize.js";
import { freshReadBy } from "../../../platform/fresh-read.js";
import { renameInStartupScript, takeBaseScript, writeStartupScript } from "./vpcs-startup.js";
import { findVpcs, freeTcpPort, VPCS_STARTUP_SCRIPT, VPCS_UDP_OFFSETS, VpcsProcess } from "../vpcs.js";
import type { ProcessDriver } from "./driver.js";

/** VPCS: one `vpcs` process per started node (vpcs.ts), one adapter, a telnet console, no pause. */
export const vpcsDriver = {
  nodeType: "vpcs" as const,
  runs: "process",
  consoles: { types: ["telnet", "none"], default: "telnet" },
  udpOffsets: VPCS_UDP_OFFSETS,
  suspends: false,
  startupScript: { takeBase: takeBaseScript, write: writeStartupScript, rename: renameInStartupScript },

  unavailable: (node) => (findVpcs() ? null : `Node ${node.name} cannot start: the vpcs program is not installed on this host (Debian package vpcs)`),
  adaptersAtStart: () => 1,
  memoryMb: () => 0,

  async start(node, launch) {
    const proc = new VpcsProcess({
      owner: launch.owner,
      nodeId: node.id,
      workdir: launch.workdir,
      runDir: launch.runDir,
      // vpcs only runs as a daemon with a console; a node without one (console_type none) gets a private port.
      consolePort: node.console ?? (await freeTcpPort()),
      nio: launch.nics[0],
      macOffset: await vpcsMacOffset(launch.ctx, node),
    });
    await proc.start();
    return proc;
  },

  computeView: () => ({ startup_script_path: VPCS_STARTUP_SCRIPT }),
  remoteCreate: async (ctx, node) => ({ mac_offset: await vpcsMacOffset(ctx, node) }),
  remoteSettings: (properties) => properties,
} satisfies ProcessDriver;

/**
 * VPCS derives its MAC from -m; give each vpcs of a project a different one (order of creation). A controller
 * placing the node here sends its own count (property mac_offset), which spans all computes of the project.
 */
async function vpcsMacOffset(ctx: AppContext, node: Node): Promise<number> {
  const placed = nodeProperties(node).mac_offset;
  if (typeof placed === "number" && Number.isInteger(placed)) return ((placed % 256) + 256) % 256;
  const before = (await vpcsOrder(ctx)(node.projectId)).indexOf(node.id);
  return Math.max(before, 0) % 256;
}

/** Per server: the vpcs nodes of a project in creation order, one read shared by the nodes that start together. */
const orders = new WeakMap<AppContext, (projectId: string) => Promise<string[]>>();
function vpcsOrder(ctx: AppContext): (projectId: string) => Promise<string[]> {
  let order = orders.get(ctx);
  if (!order) {
    order = freshReadBy(async (projectId) => {
      const rows = await ctx.db.node.findMany({ where: { projectId, nodeType: vpcsDriver.nodeType }, select: { id: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
      return rows.map((r) => r.id);
    });
    orders.set(ctx, order);
  }
  return order;
}
