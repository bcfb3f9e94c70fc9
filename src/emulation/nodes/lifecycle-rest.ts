import type { AppContext } from "../../platform/context.js";
import { type Gns3Request, sendJson, type Gns3Routes } from "../rest/kit.js";
import { idlePc } from "./dynamips.js";
import { projectNodesAction, reloadNode, startNode, stopNode, suspendNode, type NodeAction } from "./lifecycle.js";
import type { Node } from "../../generated/prisma-sqlite/client.js";
import { restNode } from "./operations.js";

const P = "/v2/projects/{project_id}";
const N = `${P}/nodes/{node_id}`;

/** Node lifecycle, one node or all of a project, and Dynamips' idle-PC routes. */
export function lifecycleRoutes(routes: Gns3Routes, ctx: AppContext): void {
  // The reference answers with a stale status (quirk 16.1); we answer with the node as it is after the action.
  const one = (run: (ctx: AppContext, projectId: string, nodeId: string) => Promise<Node>) => async ({ res, params }: Gns3Request) =>
    sendJson(res, 200, await restNode(ctx, await run(ctx, params.project_id, params.node_id)));
  routes.add("POST", `${N}/start`, one(startNode));
  routes.add("POST", `${N}/stop`, one(stopNode));
  routes.add("POST", `${N}/suspend`, one(suspendNode));
  routes.add("POST", `${N}/reload`, one(reloadNode));

  const all = (action: NodeAction) => async ({ res, params }: Gns3Request) => {
    await projectNodesAction(ctx, params.project_id, action);
    res.status(204).end();
  };
  routes.add("POST", `${P}/nodes/start`, all("start"));
  routes.add("POST", `${P}/nodes/stop`, all("stop"));
  routes.add("POST", `${P}/nodes/suspend`, all("suspend"));
  routes.add("POST", `${P}/nodes/reload`, all("reload"));

  for (const what of ["auto_idlepc", "idlepc_proposals"] as const) {
    routes.add("GET", `${N}/dynamips/${what}`, async ({ params }) => idlePc(ctx, params.project_id, params.node_id, what));
  }
}
