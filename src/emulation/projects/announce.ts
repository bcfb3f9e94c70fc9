import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { publishTopologyEvent } from "../core/events.js";
import { projectDir } from "./serialize.js";

/**
 * What a GNS3 controller tells the project stream when it (re)loads a topology — on open and on snapshot
 * restore: node.created for every node, link.created for every link, drawing.created for every drawing.
 */
export async function announceTopology(ctx: AppContext, project: Project): Promise<void> {
  const where = { projectId: project.id };
  const [nodes, links, drawings] = await Promise.all([
    ctx.db.node.findMany({ where, orderBy: { createdAt: "asc" } }),
    ctx.db.link.findMany({ where, orderBy: { createdAt: "asc" }, include: { endpoints: true } }),
    ctx.db.drawing.findMany({ where, orderBy: { createdAt: "asc" } }),
  ]);
  const dir = projectDir(ctx, project);
  for (const node of nodes) await publishTopologyEvent(ctx, project.id, { type: "node.created", node, projectDir: dir });
  for (const link of links) await publishTopologyEvent(ctx, project.id, { type: "link.created", link });
  for (const drawing of drawings) await publishTopologyEvent(ctx, project.id, { type: "drawing.created", drawing });
}
