import type { Project } from "../../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../../platform/context.js";
import { NotFoundError } from "../../../platform/core/errors.js";
import {
  assertProjectName,
  closeProject,
  createProject,
  deleteProject,
  openProject,
  updateProject,
} from "../../projects/operations.js";
import type { CreateProjectInput, ProjectSettings } from "../../projects/schema.js";
import { assertProjectId } from "../../projects/serialize.js";

/**
 * The compute-level projects (`/v2/compute/projects`, compat §15). A compute project IS the Project row of this
 * instance, and its directory is the project directory the controller uses, so on the built-in local compute
 * controller and compute see the same files, as in GNS3. The compute knows only *opened* projects: creating one
 * registers (or re-opens) the row, closing it marks the row closed — after which the compute forgets it (404).
 */

/** The compute project object: only these three keys (compat §15). */
export function computeProjectToRest(p: Project) {
  return { name: p.name, project_id: p.id, variables: p.variablesJson ? JSON.parse(p.variablesJson) : null };
}

/** The compute validates ids (400 "… is not a valid UUID"), unlike the controller; unknown or closed → 404. */
export async function getComputeProject(ctx: AppContext, projectId: string): Promise<Project> {
  assertProjectId(projectId);
  const project = await ctx.db.project.findUnique({ where: { id: projectId } });
  if (!project || project.status !== "opened") throw new NotFoundError(`Project ID ${projectId} doesn't exist`);
  return project;
}

export const listComputeProjects = (ctx: AppContext) =>
  ctx.db.project.findMany({ where: { status: "opened" }, orderBy: { createdAt: "asc" } });

/**
 * Registers a project on this compute: a known id returns that project (re-opened if it was closed), otherwise
 * the project is created exactly as the controller would (directory, topology file, project.created).
 */
export async function createComputeProject(ctx: AppContext, input: CreateProjectInput): Promise<Project> {
  assertProjectName(input.name);
  if (input.projectId) {
    assertProjectId(input.projectId);
    const existing = await ctx.db.project.findUnique({ where: { id: input.projectId } });
    if (existing) return existing.status === "opened" ? existing : openProject(ctx, existing.id);
  }
  return createProject(ctx, input);
}

/**
 * Only `variables` is used (compat §15). Omitted variables are kept — GNS3 2.2 resets them to null (quirk 8),
 * which would silently drop the controller's variables on any unrelated update.
 */
export async function updateComputeProject(
  ctx: AppContext,
  projectId: string,
  variables: ProjectSettings["variables"] | undefined,
): Promise<Project> {
  const project = await getComputeProject(ctx, projectId);
  if (variables === undefined) return project;
  return updateProject(ctx, projectId, { variables });
}

/** Closes the row (project.closed on the controller stream); the answer waits until nothing of it runs here. */
export async function closeComputeProject(ctx: AppContext, projectId: string): Promise<void> {
  await getComputeProject(ctx, projectId);
  await closeProject(ctx, projectId);
}

/** Stops what runs, then deletes the project: its nodes (cascade), its directory, the row. */
export async function deleteComputeProject(ctx: AppContext, projectId: string): Promise<void> {
  await getComputeProject(ctx, projectId);
  await ctx.services.emulation.runtime.releaseProject(projectId);
  await deleteProject(ctx, projectId);
}
