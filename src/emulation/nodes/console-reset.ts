import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { getOpenedProject } from "../projects/lookup.js";
import { getNode } from "./operations.js";

/*
 * Consoles are served by the emulators themselves (vpcs listens on its console port), not by a wrapper that
 * holds client connections, so a reset has nothing to drop: it checks what it names and succeeds, as GNS3 does.
 */

/** POST /v2/projects/{p}/nodes/console/reset: every console of an opened project. */
export async function resetProjectConsoles(ctx: AppContext, projectId: string): Promise<void> {
  await getOpenedProject(ctx, projectId);
}

/** POST /v2/projects/{p}/nodes/{n}/console/reset: one node's console. */
export function resetNodeConsole(ctx: AppContext, projectId: string, nodeId: string): Promise<Node> {
  return getNode(ctx, projectId, nodeId);
}
