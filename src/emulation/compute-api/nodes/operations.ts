import fs from "node:fs/promises";
import path from "node:path";
import type { Node } from "../../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../../platform/context.js";
import { ConflictError, NotFoundError } from "../../../platform/core/errors.js";
import { resolveInside } from "../../files/safe-path.js";
import { consoleHolder } from "../../node-model/console.js";
import { createNode, deleteNode, updateNode } from "../../nodes/operations.js";
import { nodePorts } from "../../node-model/ports.js";
import { nodeDirectory, nodeProperties } from "../../node-model/serialize.js";
import type { NodeChanges } from "../../nodes/schema.js";
import type { ConsoleType } from "../../node-model/vocabularies.js";
import { projectDir } from "../../projects/serialize.js";
import { driverFor, hasConsole, startupScriptOf, type RunnableType } from "../../runtime/drivers/registry.js";
import { NIO_WIRE } from "../../runtime/local/manager.js";
import { nodeAction, type NodeAction } from "../../nodes/lifecycle.js";
import type { DataLinkType, PcapWriter } from "../../runtime/pcap.js";
import { tcpPortIsFree } from "../../runtime/vpcs.js";
import { getComputeProject } from "../projects/operations.js";

/**
 * The per-emulator node API of a compute (`/v2/compute/projects/{pid}/{node_type}/nodes...`, compat §15), for
 * the node types this host has drivers for. Like the compute projects, a compute node IS a node row of this
 * instance on its built-in local compute, so the runtime runs it exactly as a local node (processes, devices,
 * console ports); what the controller adds is NIOs: a node port joined to a UDP endpoint on another host.
 */

export interface ComputeNodeInput {
  nodeId?: string;
  name?: string;
  console?: number | null;
  consoleType?: ConsoleType | null;
  /** Emulator properties: ports_mapping (hub, switch), startup_script and mac_offset (vpcs), GNS3's qemu properties. */
  properties: Record<string, unknown>;
}

export interface UdpNio {
  lport: number;
  rhost: string;
  rport: number;
  filters?: Record<string, unknown[]>;
  suspend?: boolean;
}

/** The compute's view of a node (GNS3's per-emulator `__json__`), not the controller's node object. */
export function computeNodeToRest(ctx: AppContext, node: Node, dir: string) {
  const driver = driverFor(node.nodeType)!; // a compute node is of a type this compute runs (getComputeNode)
  const base = { ...driver.computeView(nodeProperties(node)), name: node.name, node_id: node.id, project_id: node.projectId, status: node.status };
  const console = hasConsole(driver) ? { console: node.console, console_type: node.consoleType } : {};
  if (driver.runs === "device") return { ...base, ...console };
  return { ...base, ...console, command_line: node.commandLine ?? "", console_host: ctx.config.host, node_directory: nodeDirectory(dir, node) };
}

export async function computeNodeJson(ctx: AppContext, node: Node) {
  return computeNodeToRest(ctx, node, projectDir(ctx, await getComputeProject(ctx, node.projectId)));
}

export async function getComputeNode(ctx: AppContext, projectId: string, nodeType: string, nodeId: string): Promise<Node> {
  await getComputeProject(ctx, projectId);
  const node = await ctx.db.node.findFirst({ where: { id: nodeId, projectId, nodeType, computeId: "local" } });
  if (!node) throw new NotFoundError(`Node ID ${nodeId} doesn't exist`);
  return node;
}

/** A startup script (VPCS's startup.vpc, `%h` → the node name) is a file of the node directory, not a property. */
async function writeComputeStartupScript(ctx: AppContext, node: Node, script: unknown): Promise<void> {
  const startup = startupScriptOf(node.nodeType);
  if (!startup || typeof script !== "string") return;
  await startup.write(nodeDirectory(projectDir(ctx, await getComputeProject(ctx, node.projectId)), node), node.name, script);
}

function splitProperties(properties: Record<string, unknown>) {
  const { startup_script: script, ...stored } = properties;
  return { script, stored };
}

/**
 * A console port asked for by the controller is kept when this host can give it (in the configured range, held by
 * no other node here, not bound by another program); otherwise the compute picks one, like GNS3's port manager.
 */
async function usableConsole(ctx: AppContext, port: number | null | undefined): Promise<number | null | undefined> {
  if (port == null) return port;
  const [lo, hi] = ctx.config.consolePorts;
  if (port < lo || port > hi) return undefined;
  if (await consoleHolder(ctx.db, "local", port)) return undefined;
  return (await tcpPortIsFree(port)) ? port : undefined;
}

export async function createComputeNode(ctx: AppContext, projectId: string, nodeType: RunnableType, input: ComputeNodeInput): Promise<Node> {
  await getComputeProject(ctx, projectId);
  const { script, stored } = splitProperties(input.properties);
  const node = await createNode(ctx, projectId, {
    nodeId: input.nodeId,
    name: input.name ?? nodeType,
    nodeType,
    computeId: "local",
    console: await usableConsole(ctx, input.console),
    consoleType: input.consoleType,
    properties: stored,
  });
  await writeComputeStartupScript(ctx, node, script);
  return node;
}

export async function updateComputeNode(ctx: AppContext, projectId: string, nodeType: string, nodeId: string, input: ComputeNodeInput): Promise<Node> {
  await getComputeNode(ctx, projectId, nodeType, nodeId);
  const { script, stored } = splitProperties(input.properties);
  const changes: NodeChanges = { name: input.name, console: input.console, consoleType: input.consoleType };
  if (Object.keys(stored).length) changes.properties = stored;
  const node = await updateNode(ctx, projectId, nodeId, changes);
  await writeComputeStartupScript(ctx, node, script);
  return node;
}

/** The node delete commands the runtime to stop the node and drop its NIOs before it answers. */
export async function deleteComputeNode(ctx: AppContext, projectId: string, nodeType: string, nodeId: string): Promise<void> {
  await getComputeNode(ctx, projectId, nodeType, nodeId);
  await deleteNode(ctx, projectId, nodeId);
}

export async function computeNodeAction(ctx: AppContext, projectId: string, nodeType: string, nodeId: string, action: NodeAction): Promise<Node> {
  await getComputeNode(ctx, projectId, nodeType, nodeId);
  return nodeAction(ctx, projectId, nodeId, action);
}

// ------------------------------------------------------------------ ports and NIOs

/** GNS3's compute answers a port the node does not have with a 409 (NodeError). */
function assertPort(node: Node, adapter: number, port: number): void {
  const ports = nodePorts({ ...node, properties: nodeProperties(node) });
  if (!ports.some((p) => p.adapter_number === adapter && p.port_number === port)) {
    throw new ConflictError(`Port ${adapter}/${port} doesn't exist on ${node.nodeType} node ${node.name}`);
  }
}

const nioWireId = (node: Node, adapter: number, port: number) => `${NIO_WIRE}${node.id}/${adapter}/${port}`;

/** POST /ports/udp: a port of this host's UDP range, held until the NIO using it goes (or the server stops). */
export async function allocateUdpPort(ctx: AppContext, projectId: string): Promise<number> {
  await getComputeProject(ctx, projectId);
  return ctx.services.emulation.runtime.pool.allocate();
}

export async function addNio(ctx: AppContext, projectId: string, nodeType: string, nodeId: string, adapter: number, port: number, nio: UdpNio) {
  const node = await getComputeNode(ctx, projectId, nodeType, nodeId);
  assertPort(node, adapter, port);
  const compute = ctx.services.emulation.runtime;
  const bindHost = ctx.config.host === "::" ? "0.0.0.0" : ctx.config.host;
  const id = await compute.wireNio(node, adapter, port, {
    listen: nio.lport,
    deliver: nio.rport,
    host: nio.rhost,
    bind: bindHost,
    // The NIO's local port came from POST /ports/udp (the pool); it goes back with the NIO.
    release: () => compute.pool.release(nio.lport),
  });
  const wired = compute.wiredLink(id)!;
  wired.tunnel.setFilters(nio.filters ?? {});
  wired.tunnel.setSuspended(Boolean(nio.suspend));
  return { type: "nio_udp", lport: nio.lport, rhost: nio.rhost, rport: nio.rport, filters: nio.filters ?? {}, suspend: Boolean(nio.suspend) };
}

export async function removeNio(ctx: AppContext, projectId: string, nodeType: string, nodeId: string, adapter: number, port: number): Promise<void> {
  const node = await getComputeNode(ctx, projectId, nodeType, nodeId);
  assertPort(node, adapter, port);
  await ctx.services.emulation.runtime.unwireLink(nioWireId(node, adapter, port));
}

async function wiredNio(ctx: AppContext, projectId: string, nodeType: string, nodeId: string, adapter: number, port: number) {
  const node = await getComputeNode(ctx, projectId, nodeType, nodeId);
  assertPort(node, adapter, port);
  const id = nioWireId(node, adapter, port);
  return { node, id, wired: ctx.services.emulation.runtime.wiredLink(id) };
}

/** Capture on a node port (the compute side of GNS3's link capture): into project-files/captures/<name>. */
export async function startPortCapture(
  ctx: AppContext,
  projectId: string,
  nodeType: string,
  nodeId: string,
  adapter: number,
  port: number,
  fileName: string,
  dataLinkType: DataLinkType = "DLT_EN10MB",
): Promise<string> {
  const { node, id, wired } = await wiredNio(ctx, projectId, nodeType, nodeId, adapter, port);
  if (!wired) throw new ConflictError(`Port ${adapter}/${port} of ${node.name} is not connected`);
  if (wired.capture) throw new ConflictError(`Packet capture is already activated on port ${adapter}/${port} of ${node.name}`);
  const dir = path.join(projectDir(ctx, await getComputeProject(ctx, projectId)), "project-files", "captures");
  await fs.mkdir(dir, { recursive: true });
  const file = await resolveInside(dir, fileName);
  await ctx.services.emulation.runtime.startCapture(id, file, dataLinkType);
  return file;
}

export async function stopPortCapture(ctx: AppContext, projectId: string, nodeType: string, nodeId: string, adapter: number, port: number): Promise<void> {
  const { id } = await wiredNio(ctx, projectId, nodeType, nodeId, adapter, port);
  await ctx.services.emulation.runtime.stopCapture(id);
}

export async function portCapture(ctx: AppContext, projectId: string, nodeType: string, nodeId: string, adapter: number, port: number): Promise<PcapWriter> {
  const { node, wired } = await wiredNio(ctx, projectId, nodeType, nodeId, adapter, port);
  if (!wired?.capture) throw new ConflictError(`No packet capture is active on port ${adapter}/${port} of ${node.name}`);
  return wired.capture;
}
