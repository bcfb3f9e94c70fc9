import fs from "node:fs/promises";
import path from "node:path";
import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, NotFoundError } from "../../platform/errors.js";
import { resolveInside } from "../files/safe-path.js";
import { getLink, setLinkCaptureState } from "../links/operations.js";
import type { LinkWithEndpoints } from "../links/serialize.js";
import { getNode, projectDirectory, setNodeRuntimeState } from "../nodes/operations.js";
import { nodeDirectory } from "../nodes/serialize.js";
import { getOpenedProject, getProject } from "../projects/lookup.js";
import { isRemote } from "../computes/model.js";
import { RUNNABLE_TYPES, unsupportedReason } from "./manager.js";
import type { DataLinkType, PcapWriter } from "./pcap.js";

/**
 * Node lifecycle and packet capture, shared by REST and GraphQL. Status changes are persisted and announced
 * (node.updated) through the nodes module; capture state through the links module (link.updated).
 */
export type NodeAction = "start" | "stop" | "suspend" | "reload";
export const NODE_ACTIONS: readonly NodeAction[] = ["start", "stop", "suspend", "reload"];

const ALWAYS_ON = new Set(["ethernet_hub", "ethernet_switch"]);
const BULK_PARALLELISM = 3;

async function workdir(ctx: AppContext, node: Node): Promise<string> {
  return nodeDirectory(projectDirectory(ctx, await getProject(ctx, node.projectId)), node);
}

async function startNow(ctx: AppContext, node: Node): Promise<Node> {
  const compute = ctx.services.emulation.runtime;
  const commandLine = await compute.startProcess(node, await workdir(ctx, node));
  if (ALWAYS_ON.has(node.nodeType)) return node;
  return setNodeRuntimeState(ctx, node.id, { status: "started", commandLine });
}

async function stopNow(ctx: AppContext, node: Node): Promise<Node> {
  if (!RUNNABLE_TYPES.has(node.nodeType) || ALWAYS_ON.has(node.nodeType)) return node; // nothing runs: nothing to stop
  await ctx.services.emulation.runtime.stopProcess(node.id);
  const after = await setNodeRuntimeState(ctx, node.id, { status: "stopped" });
  await stopOrphanCaptures(ctx, node.id);
  return after;
}

/** GNS3 stops a capture when the node it runs on stops; here: when no end of the link is running any more. */
async function stopOrphanCaptures(ctx: AppContext, nodeId: string): Promise<void> {
  const links = await ctx.db.link.findMany({ where: { capturing: true, endpoints: { some: { nodeId } } }, include: { endpoints: true } });
  for (const link of links) {
    if (await hasRunningDevice(ctx, link)) continue;
    await ctx.services.emulation.runtime.stopCapture(link.id);
    await setLinkCaptureState(ctx, link.id, { capturing: false, captureComputeId: null });
  }
}

/** start | stop | suspend | reload one node; returns the node as it stands afterwards. */
export async function nodeAction(ctx: AppContext, projectId: string, nodeId: string, action: NodeAction): Promise<Node> {
  await getNode(ctx, projectId, nodeId);
  const compute = ctx.services.emulation.runtime;
  return compute.serial(`node:${nodeId}`, async () => {
    const node = await getNode(ctx, projectId, nodeId);
    if (isRemote(node)) return ctx.services.emulation.placement.action(node, action); // it runs on another compute
    switch (action) {
      case "start":
        return startNow(ctx, node);
      case "stop":
        return stopNow(ctx, node);
      case "suspend": {
        // VPCS cannot be suspended: the compute accepts the request and nothing changes (as in GNS3).
        const reason = unsupportedReason(node);
        if (reason && node.nodeType !== "vpcs") throw new ConflictError(reason);
        const vm = compute.vm(node.id);
        if (!vm) return node; // a stopped VM stays stopped
        await vm.suspend();
        return setNodeRuntimeState(ctx, node.id, { status: "suspended" });
      }
      case "reload": {
        const reason = unsupportedReason(node);
        if (reason) throw new ConflictError(reason);
        if (ALWAYS_ON.has(node.nodeType)) return node;
        const vm = compute.vm(node.id);
        if (vm) {
          // GNS3 resets the machine in place (system_reset); a suspended VM runs again.
          await vm.reset();
          await vm.resume();
          return setNodeRuntimeState(ctx, node.id, { status: "started" });
        }
        await stopNow(ctx, node);
        return startNow(ctx, await getNode(ctx, projectId, nodeId));
      }
    }
  });
}

/** POST P/nodes/{action}: every node, three at a time; reload = stop all, then start all. First error wins. */
export async function bulkNodeAction(ctx: AppContext, projectId: string, action: NodeAction): Promise<void> {
  await getOpenedProject(ctx, projectId);
  const nodes = await ctx.db.node.findMany({ where: { projectId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const run = async (a: NodeAction) => {
    const errors: unknown[] = [];
    const queue = [...nodes];
    const worker = async () => {
      for (let n = queue.shift(); n; n = queue.shift()) {
        try {
          await nodeAction(ctx, projectId, n.id, a);
        } catch (e) {
          errors.push(e);
        }
      }
    };
    await Promise.all(Array.from({ length: BULK_PARALLELISM }, worker));
    if (errors.length) throw errors[0];
  };
  if (action === "reload") {
    await run("stop");
    await run("start");
  } else await run(action);
}

// ------------------------------------------------------------------ dynamips idle-PC

/** Idle-PC values exist only for Dynamips routers; the compute has no such route for other node types. */
export async function idlePc(ctx: AppContext, projectId: string, nodeId: string, what: "auto_idlepc" | "idlepc_proposals"): Promise<never> {
  const node = await getNode(ctx, projectId, nodeId);
  if (node.nodeType !== "dynamips") throw new NotFoundError(`GET /projects/${projectId}/${node.nodeType}/nodes/${nodeId}/${what} not found`);
  throw new ConflictError(unsupportedReason(node)!);
}

// ------------------------------------------------------------------ capture

async function hasRunningDevice(ctx: AppContext, link: LinkWithEndpoints): Promise<boolean> {
  const nodes = await ctx.db.node.findMany({ where: { id: { in: link.endpoints.map((e) => e.nodeId) } } });
  // A remote node's status is its compute's (placement keeps it current); the relay is here either way.
  return nodes.some(
    (n) => n.status === "started" && (ALWAYS_ON.has(n.nodeType) || isRemote(n) || ctx.services.emulation.runtime.isRunning(n.id)),
  );
}

/** `<node1>_<a1>-<p1>_to_<node2>_<a2>-<p2>.pcap` with characters outside [0-9A-Za-z_-] removed (GNS3's default). */
export async function defaultCaptureFileName(ctx: AppContext, link: LinkWithEndpoints): Promise<string> {
  const nodes = await ctx.db.node.findMany({ where: { id: { in: link.endpoints.map((e) => e.nodeId) } } });
  const names = new Map(nodes.map((n) => [n.id, n.name]));
  const ends = [...link.endpoints].sort((a, b) => a.position - b.position);
  const raw = ends.map((e) => `${names.get(e.nodeId) ?? ""}_${e.adapterNumber}-${e.portNumber}`).join("_to_");
  return `${raw.replace(/[^0-9A-Za-z_-]/g, "")}.pcap`;
}

export interface CaptureInput {
  captureFileName?: string;
  dataLinkType?: DataLinkType;
}

export async function startLinkCapture(ctx: AppContext, projectId: string, linkId: string, input: CaptureInput = {}): Promise<LinkWithEndpoints> {
  const link = await getLink(ctx, projectId, linkId);
  if (link.endpoints.length < 2 || !(await hasRunningDevice(ctx, link))) {
    throw new ConflictError("Cannot capture because there is no running device on this link");
  }
  const compute = ctx.services.emulation.runtime;
  if (compute.capture(linkId)) throw new ConflictError("Packet capture is already activated on this link");
  const name = input.captureFileName || (await defaultCaptureFileName(ctx, link));
  const dir = path.join(projectDirectory(ctx, await getProject(ctx, projectId)), "project-files", "captures");
  await fs.mkdir(dir, { recursive: true });
  const file = await resolveInside(dir, name);
  await compute.startCapture(linkId, file, input.dataLinkType ?? "DLT_EN10MB");
  return setLinkCaptureState(ctx, linkId, { capturing: true, captureFileName: path.basename(file), captureFilePath: file, captureComputeId: "local" });
}

/** Always succeeds (and announces the link), capturing or not, like GNS3. */
export async function stopLinkCapture(ctx: AppContext, projectId: string, linkId: string): Promise<LinkWithEndpoints> {
  await getLink(ctx, projectId, linkId);
  await ctx.services.emulation.runtime.stopCapture(linkId);
  return setLinkCaptureState(ctx, linkId, { capturing: false, captureComputeId: null });
}

/** The live capture of a link (GET L/pcap, linkPackets); 409 when there is none here. */
export async function linkCapture(ctx: AppContext, projectId: string, linkId: string): Promise<PcapWriter> {
  const link = await getLink(ctx, projectId, linkId);
  const writer = ctx.services.emulation.runtime.capture(linkId);
  // With Redis, instances share the database but each runs its own captures: this one may be another's.
  if (!writer && link.capturing && ctx.config.redisUrl) throw new ConflictError("The packet capture of this link runs on another instance: read it there");
  if (!writer) throw new ConflictError("This link has no active packet capture");
  return writer;
}
