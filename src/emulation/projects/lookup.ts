import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";

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

/**
 * What an operation on an item of an opened project (or on the project itself) fails with when nothing else can
 * stop it: an id or input it refuses, no such item or project, a closed project (ForbiddenError, PROJECT_CLOSED).
 */
export const OPENED_PROJECT_ERRORS = [InvalidInputError, NotFoundError, ForbiddenError];

/** An opened project's item whose change the current state can refuse too (a port taken, a locked node): ConflictError. */
export const TOPOLOGY_CHANGE_ERRORS = [...OPENED_PROJECT_ERRORS, ConflictError];
