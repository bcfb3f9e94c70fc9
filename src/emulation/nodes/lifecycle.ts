import os from "node:os";
import type { Node, Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { getOpenedProject } from "../projects/lookup.js";
import { isRemote } from "../computes/model.js";
import type { Compute, RunState } from "../runtime/compute.js";
import { getOpenedNode, projectDirectory, publishIfChanged, runtimeStateData, setNodeRuntimeState } from "./operations.js";
import { nodeDirectory } from "../node-model/serialize.js";
import { batched } from "../../platform/batched.js";

/**
 * Node lifecycle (`POST …/nodes/{id}/start|stop|suspend|reload`, GraphQL startNode…): the domain decides and
 * records, the compute that runs the node obeys (runtime/compute.ts: this host's runtime or a remote compute, the
 * same commands) and answers the states to record; each is persisted and announced (node.updated) here.
 */
export type NodeAction = "start" | "stop" | "suspend" | "reload";
export const NODE_ACTIONS: readonly NodeAction[] = ["start", "stop", "suspend", "reload"];

/**
 * Nodes a bulk action runs at once. A node start mostly waits (a process to exec, its console to listen), and the
 * sandboxes are forked by the spawn helper (runtime/spawner.ts), not by the server, so the bound is what the host
 * execs at once: with 16 on 2 CPUs a 50-node start all took four waves (961 ms), with 64 one (769 ms). A VM's RAM
 * is capped by the compute whatever runs.
 */
const BULK_PARALLELISM = 32 * os.availableParallelism();

/** Each action as a command to the compute; a process starts in the node directory. */
const COMMANDS: Record<NodeAction, (compute: Compute, node: Node, workdir: string) => Promise<RunState[]>> = {
  start: (compute, node, dir) => compute.startNode(node, dir),
  stop: (compute, node) => compute.stopNode(node),
  suspend: (compute, node) => compute.suspendNode(node),
  reload: (compute, node, dir) => compute.reloadNode(node, dir),
};

/** The compute that runs the node: this host's runtime, or another compute through its API. */
function computeOf(ctx: AppContext, node: Node): Compute {
  return isRemote(node) ? ctx.services.emulation.placement : ctx.services.emulation.runtime;
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
 * that runs the project (instances/runners.ts), one action at a time per node: the node and its project are read
 * there once, under its lock, and that instance answers with the node it recorded.
 */
export async function nodeAction(ctx: AppContext, projectId: string, nodeId: string, action: NodeAction): Promise<Node> {
  const { runners, runtime } = ctx.services.emulation;
  const here = () => runtime.serial(`node:${nodeId}`, async () => commandCompute(ctx, await getOpenedNode(ctx, projectId, nodeId), action));
  return (await runners.onRunner(projectId, { kind: "nodeAction", projectId, nodeId, action }, here, nodeFromReply))!;
}

/** Records a state the compute answered for a node (`before`: the node as last recorded) and announces it. */
type Recorder = (before: Node, state: RunState) => Promise<Node>;

/**
 * The compute that runs the node carries the action out; each state it answers is recorded and announced. A node
 * started that cannot be recorded (deleted meanwhile) is stopped again: it leaves nothing running.
 */
async function commandCompute(
  ctx: AppContext,
  { project, node }: { project: Project; node: Node },
  action: NodeAction,
  record: Recorder = (_before, state) => setNodeRuntimeState(ctx, node.id, state),
): Promise<Node> {
  const compute = computeOf(ctx, node);
  const states = await COMMANDS[action](compute, node, nodeDirectory(projectDirectory(ctx, project), node));
  let after = node;
  for (const state of states) {
    try {
      after = await record(after, state);
    } catch (e) {
      if (state.status === "started") await compute.stopNode(node).catch(() => {});
      throw e;
    }
    // GNS3 stops a capture when the node it runs on stops; here: when no end of the link runs any more.
    if (state.status === "stopped") await ctx.services.emulation.nodeStopped(node.id);
  }
  return after;
}

/**
 * The states of a bulk action's nodes, written together: those that come up while a write runs share the next one
 * (one transaction), and their node.updated events carry the project read once. A state with properties (merged into
 * the node's) is written alone, from the row as it is then.
 */
function bulkRecorder(ctx: AppContext, project: Project): Recorder {
  const update = ({ before, state }: { before: Node; state: RunState }) => ctx.db.node.update({ where: { id: before.id }, data: runtimeStateData(before, state) });
  const write = batched(async (items: { before: Node; state: RunState }[]): Promise<PromiseSettledResult<Node>[]> => {
    try {
      return (await ctx.db.$transaction(items.map(update))).map((value) => ({ status: "fulfilled", value }));
    } catch {
      return Promise.allSettled(items.map(update)); // one node deleted meanwhile fails alone
    }
  });
  return async (before, state) => {
    if (state.properties) return setNodeRuntimeState(ctx, before.id, state);
    const after = await write({ before, state });
    await publishIfChanged(ctx, before, after, project);
    return after;
  };
}

/** A node as the runner answered it (JSON): its one date comes back as a string. */
const nodeFromReply = (reply: unknown): Node => {
  const node = reply as Node & { createdAt: string | Date };
  return { ...node, createdAt: new Date(node.createdAt) };
};

/**
 * POST P/nodes/{action}: every node, BULK_PARALLELISM at a time; reload = stop all, then start all. A node that
 * fails does not stop the others; once all have run, the first failure is the answer (gns3-server's Pool: every
 * task runs, then one error is raised, e.g. 409). Where this instance runs the project, the project and its nodes
 * are read once for all (each node's action still runs under its lock) and their states are written together;
 * else each node's action goes to the runner.
 */
export async function projectNodesAction(ctx: AppContext, projectId: string, action: NodeAction): Promise<void> {
  const project = await getOpenedProject(ctx, projectId);
  const nodes = await ctx.db.node.findMany({ where: { projectId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const { runners, runtime } = ctx.services.emulation;
  let one: (node: Node, a: NodeAction) => Promise<Node>;
  if (await runners.runsHere(projectId)) {
    const record = bulkRecorder(ctx, project);
    one = (node, a) => runtime.serial(`node:${node.id}`, () => commandCompute(ctx, { project, node }, a, record));
  } else one = (node, a) => nodeAction(ctx, projectId, node.id, a);
  const current = new Map(nodes.map((n) => [n.id, n])); // reload's start goes on from what its stop recorded
  const run = async (a: NodeAction) => {
    const errors: unknown[] = [];
    const queue = [...nodes];
    const worker = async () => {
      for (let n = queue.shift(); n; n = queue.shift()) {
        try {
          current.set(n.id, await one(current.get(n.id)!, a));
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
