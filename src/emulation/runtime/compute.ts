import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { NodeStatus } from "../node-model/vocabularies.js";

/** A node's state as the compute that runs it reports it: what the domain records (a compute writes no row). */
export interface RunState {
  status: NodeStatus;
  commandLine?: string | null;
  console?: number | null;
  /** Properties the compute changed (a docker node's container made again at start: container_id). */
  properties?: Record<string, unknown>;
}

/**
 * What the node lifecycle (nodes/lifecycle.ts) commands of the compute that runs a node — this host's runtime
 * (`LocalCompute`, local/manager.ts) or another compute through its API (`Placement`, remote-compute/placement.ts) — so
 * that the lifecycle never asks which. Each answers the states to record, in order (a reload by stop and start is
 * two), and none when nothing changed (a hub, a VPCS asked to suspend, a stopped VM asked to suspend).
 */
export interface Compute {
  startNode(node: Node, workdir: string): Promise<RunState[]>;
  stopNode(node: Node): Promise<RunState[]>;
  suspendNode(node: Node): Promise<RunState[]>;
  reloadNode(node: Node, workdir: string): Promise<RunState[]>;
}
