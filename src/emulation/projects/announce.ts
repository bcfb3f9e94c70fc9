import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { publishProjectEvent } from "../events.js";
import { linkToRest } from "../links/serialize.js";
import { nodeToRest } from "../nodes/serialize.js";
import { drawingToEntry } from "../topology-file/document.js";
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
  for (const n of nodes) await publishProjectEvent(ctx, project.id, "node.created", nodeToRest(n, dir));
  for (const l of links) await publishProjectEvent(ctx, project.id, "link.created", linkToRest(l));
  for (const d of drawings) await publishProjectEvent(ctx, project.id, "drawing.created", { ...drawingToEntry(d), project_id: project.id });
}
