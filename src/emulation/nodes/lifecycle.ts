import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError } from "../../platform/core/errors.js";
import { stopOrphanCaptures } from "../links/capture.js";
import { getOpenedProject, getProject } from "../projects/lookup.js";
import { isRemote } from "../computes/model.js";
import { driverFor, isAlwaysOn, runsProcess, unavailableReason } from "../runtime/drivers/registry.js";
import { getNode, projectDirectory, setNodeRuntimeState } from "./operations.js";
import { nodeDirectory } from "../node-model/serialize.js";

/**
 * Node lifecycle (`POST …/nodes/{id}/start|stop|suspend|reload`, GraphQL startNode…): the domain decides and
 * records, the compute that runs the node obeys. Status changes are persisted and announced (node.updated)
 * through the nodes module.
 */
export type NodeAction = "start" | "stop" | "suspend" | "reload";
export const NODE_ACTIONS: readonly NodeAction[] = ["start", "stop", "suspend", "reload"];

const BULK_PARALLELISM = 3;

async function workdir(ctx: AppContext, node: Node): Promise<string> {
  return nodeDirectory(projectDirectory(ctx, await getProject(ctx, node.projectId)), node);
}

async function startNow(ctx: AppContext, node: Node): Promise<Node> {
  const compute = ctx.services.emulation.runtime;
  const commandLine = await compute.startProcess(node, await workdir(ctx, node));
  if (isAlwaysOn(node.nodeType)) return node;
  return setNodeRuntimeState(ctx, node.id, { status: "started", commandLine });
}

async function stopNow(ctx: AppContext, node: Node): Promise<Node> {
  if (!runsProcess(node.nodeType)) return node; // nothing runs: nothing to stop
  await ctx.services.emulation.runtime.stopProcess(node.id);
  const after = await setNodeRuntimeState(ctx, node.id, { status: "stopped" });
  await stopOrphanCaptures(ctx, node.id);
  return after;
}

export function startNode(ctx: AppContext, projectId: string, nodeId: string): Promise<Node> {
  return nodeAction(ctx, projectId, nodeId, "start");
}

export function stopNode(ctx: AppContext, projectId: string, nodeId: string): Promise<Node> {
  return nodeAction(ctx, projectId, nodeId, "stop");
}

export function suspendNode(ctx: AppContext, projectId: string, nodeId: string): Promise<Node> {
  return nodeAction(ctx, projectId, nodeId, "suspend");
}

export function reloadNode(ctx: AppContext, projectId: string, nodeId: string): Promise<Node> {
  return nodeAction(ctx, projectId, nodeId, "reload");
}


/**
 * start | stop | suspend | reload one node; returns the node as it stands afterwards. Carried out by the instance
 * that runs the project (instances/runners.ts), one action at a time per node.
 */
export async function nodeAction(ctx: AppContext, projectId: string, nodeId: string, action: NodeAction): Promise<Node> {
  await getNode(ctx, projectId, nodeId);
  const here = () => nodeActionHere(ctx, projectId, nodeId, action);
  return (await ctx.services.emulation.runners.onRunner(projectId, { kind: "nodeAction", projectId, nodeId, action }, here)) ?? getNode(ctx, projectId, nodeId);
}

async function nodeActionHere(ctx: AppContext, projectId: string, nodeId: string, action: NodeAction): Promise<Node> {
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
        // What cannot pause accepts the request and nothing changes (VPCS, as in GNS3; hubs and switches).
        if (driverFor(node.nodeType)?.suspends === false) return node;
        const reason = unavailableReason(node);
        if (reason) throw new ConflictError(reason);
        if (!(await compute.suspendProcess(node.id))) return node; // a stopped VM stays stopped
        return setNodeRuntimeState(ctx, node.id, { status: "suspended" });
      }
      case "reload": {
        const reason = unavailableReason(node);
        if (reason) throw new ConflictError(reason);
        if (isAlwaysOn(node.nodeType)) return node;
        // GNS3 resets the machine in place (system_reset); a suspended VM runs again.
        if (await compute.reloadProcess(node.id)) return setNodeRuntimeState(ctx, node.id, { status: "started" });
        await stopNow(ctx, node);
        return startNow(ctx, await getNode(ctx, projectId, nodeId));
      }
    }
  });
}

/** POST P/nodes/{action}: every node, three at a time; reload = stop all, then start all. First error wins. */
export async function projectNodesAction(ctx: AppContext, projectId: string, action: NodeAction): Promise<void> {
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

