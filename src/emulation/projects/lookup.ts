import type { AppContext } from "../../platform/context.js";
import { ForbiddenError, NotFoundError } from "../../platform/core/errors.js";

/** The project row or GNS3's 404 "Project ID <id> doesn't exist". */
export async function getProject(ctx: AppContext, projectId: string) {
  const project = await ctx.db.project.findUnique({ where: { id: projectId } });
  if (!project) throw new NotFoundError(`Project ID ${projectId} doesn't exist`);
  return project;
}

/** Mutations and per-item reads of nodes, links, drawings and snapshots need an opened project (403 otherwise). */
export async function getOpenedProject(ctx: AppContext, projectId: string) {
  const project = await getProject(ctx, projectId);
  if (project.status !== "opened") throw new ForbiddenError("The project is not opened", { reason: "project_closed" });
  return project;
}
