import type { AppContext } from "../../platform/context.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { hasIdlePc, unavailableReason } from "../runtime/drivers/registry.js";
import { getNode } from "./operations.js";

/** Idle-PC values exist only for Dynamips routers; the compute has no such route for other node types. */
export async function idlePc(ctx: AppContext, projectId: string, nodeId: string, what: "auto_idlepc" | "idlepc_proposals"): Promise<never> {
  const node = await getNode(ctx, projectId, nodeId);
  if (!hasIdlePc(node.nodeType)) throw new NotFoundError(`GET /projects/${projectId}/${node.nodeType}/nodes/${nodeId}/${what} not found`);
  throw new ConflictError(unavailableReason(node)!);
}
