import fs from "node:fs/promises";
import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { getOpenedProject } from "../projects/lookup.js";
import { projectDir } from "../projects/serialize.js";
import { startupScriptOf } from "../runtime/drivers/registry.js";
import { createNode, getNode } from "./operations.js";
import { BUILTIN_TYPES, nodeDirectory, nodeProperties } from "../node-model/serialize.js";
import type { NodeLabel } from "./schema.js";
import type { ConsoleType, NodeType } from "../node-model/vocabularies.js";

/** Properties that identify one node and must not be copied (GNS3's list). */
const UNIQUE_PROPERTIES = ["node_id", "name", "mac_addr", "mac_address", "compute_id", "application_id", "dynamips_id"];

/**
 * GNS3's node duplicate: a new node with the same settings and properties, named like the original (the name
 * allocator renumbers it: PC1 → PC2), unlocked, at the given position, with its own console port, and a copy of
 * the original's files (startup config …; a VPCS `set pcname` line takes the new name, as GNS3's compute does).
 * Links are not copied.
 */
export async function duplicateNode(ctx: AppContext, projectId: string, nodeId: string, at: { x: number; y: number; z?: number }): Promise<Node> {
  const node = await getNode(ctx, projectId, nodeId);
  const properties = nodeProperties(node);
  for (const key of UNIQUE_PROPERTIES) delete properties[key];
  const copy = await createNode(ctx, projectId, {
    name: node.name,
    nodeType: node.nodeType as NodeType,
    computeId: node.computeId,
    templateId: node.templateId,
    consoleType: node.consoleType as ConsoleType | null,
    consoleAutoStart: node.consoleAutoStart,
    properties,
    label: JSON.parse(node.labelJson) as NodeLabel,
    symbol: node.symbol,
    x: at.x,
    y: at.y,
    z: at.z ?? node.z,
    locked: false,
    portNameFormat: node.portNameFormat,
    portSegmentSize: node.portSegmentSize,
    firstPortName: node.firstPortName,
    customAdapters: JSON.parse(node.customAdapters) as Record<string, unknown>[],
  });
  // The files live on the compute that runs the node; the local compute's are copied here.
  if (!BUILTIN_TYPES.has(node.nodeType) && node.computeId === "local") {
    const dir = projectDir(ctx, await getOpenedProject(ctx, projectId));
    const from = nodeDirectory(dir, node);
    if (await fs.stat(from).catch(() => undefined)) await fs.cp(from, nodeDirectory(dir, copy), { recursive: true, force: true });
    await startupScriptOf(copy.nodeType)?.rename(nodeDirectory(dir, copy), copy.name);
  }
  return copy;
}
