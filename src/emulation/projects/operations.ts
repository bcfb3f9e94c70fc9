import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError } from "../../platform/core/errors.js";
import { parseInput } from "../../platform/input.js";
import { parseJson, UnsafeJsonError } from "../../platform/http/safe-json.js";
import { withUniqueRetry } from "../../platform/db/unique-retry.js";
import { changedFields, linkEndNodes, publishControllerEvent, publishTopologyEvent } from "../core/events.js";
import { isStrictlyInside, resolveInsideRoots } from "../files/safe-path.js";
import { assertFileName } from "../core/names.js";
import { holdProjectConsoles, releaseProjectConsoles } from "../node-model/console.js";
import { alwaysOnTypes } from "../runtime/drivers/registry.js";
import { MAX_TOPOLOGY_BYTES, parseTopology } from "../topology-file/document.js";
import { insertTopology, projectSettings, TOPOLOGY_TRANSACTION } from "../topology-file/rows.js";
import { announceTopology } from "./announce.js";
import { writeTopologyFile } from "./disk.js";
import { getProject } from "./lookup.js";
import { createProjectSchema, updateProjectSchema, type CreateProjectInput, type ProjectSettings, type UpdateProjectInput } from "./schema.js";
import { assertProjectId, projectDir, projectsRoot } from "./serialize.js";

/** A refusal GNS3 answers with a bare 403 (no body): features reserved to a local server. */
export class LocalOnlyError extends ForbiddenError {
  constructor(what: string) {
    super(`${what} is only allowed on a local server`);
  }
}

export const isUniqueViolation = (e: unknown) => (e as { code?: string })?.code === "P2002";

const nameTaken = (name: string) => new ConflictError(`Project "${name}" already exists`, { target: "name", reason: "already_exists" });

function settingsData(s: ProjectSettings) {
  const data: Partial<Project> = {};
  const keys = [
    "autoClose", "autoOpen", "autoStart", "sceneHeight", "sceneWidth", "zoom", "gridSize", "drawingGridSize",
    "showLayers", "snapToGrid", "showGrid", "showInterfaceLabels",
  ] as const;
  for (const k of keys) if (s[k] !== undefined) (data as Record<string, unknown>)[k] = s[k];
  if (s.supplier !== undefined) data.supplierJson = s.supplier === null ? null : JSON.stringify(s.supplier);
  if (s.variables !== undefined) data.variablesJson = s.variables === null ? null : JSON.stringify(s.variables);
  return data;
}

/** Where a client may put or load projects: the projects root, plus the configured roots in local mode. */
export const allowedRoots = (ctx: AppContext) => [projectsRoot(ctx), ...(ctx.config.local ? ctx.config.allowedRoots : [])];

/**
 * A user-chosen project directory or file, resolved (symlinks followed) and proved inside an allowed root: GNS3
 * keeps non-local servers under the projects root; here local mode too stays inside the roots a user configured.
 */
export async function checkedPath(ctx: AppContext, userPath: string): Promise<string> {
  if (userPath.includes('"')) throw new ForbiddenError("The path is not allowed");
  return resolveInsideRoots(allowedRoots(ctx), userPath).catch(() => {
    throw new ForbiddenError("The path is not allowed");
  });
}

/** Names are names: the topology file is `<name>.gns3`, so a name must also be a safe file name. */
export const assertProjectName = (name: string) => assertFileName("Project", name);

/** `name`, else the first free `name-1`, `name-2`, … (how GNS3 names duplicates and imports). */
export async function freeProjectName(ctx: AppContext, name: string): Promise<string> {
  const taken = new Set(
    (await ctx.db.project.findMany({ where: { name: { startsWith: name } }, select: { name: true } })).map((p) => p.name),
  );
  if (!taken.has(name)) return name;
  let i = 1;
  while (taken.has(`${name}-${i}`)) i++;
  return `${name}-${i}`;
}

export const listProjects = (ctx: AppContext) => ctx.db.project.findMany({ orderBy: { createdAt: "asc" } });

/** Creates an opened project with its directory and empty topology file; a known project_id returns that project. */
export async function createProject(ctx: AppContext, raw: CreateProjectInput): Promise<Project> {
  const input = parseInput(createProjectSchema, raw);
  assertProjectName(input.name);
  if (input.projectId) {
    const existing = await ctx.db.project.findUnique({ where: { id: input.projectId } });
    if (existing) return existing;
  }
  const id = input.projectId ?? randomUUID();
  assertProjectId(id);
  let customDir: string | null = null;
  if (input.path) {
    customDir = await checkedPath(ctx, input.path);
    if (!input.projectId && (await exists(customDir))) throw new ForbiddenError(`The path ${input.path} already exist.`);
  }
  const sameName = await ctx.db.project.findUnique({ where: { name: input.name } });
  // The holder of the name may be this very project_id, created by a concurrent request meanwhile.
  if (sameName && sameName.id === input.projectId) return sameName;
  if (sameName) throw nameTaken(input.name);
  const defaultDir = projectDir(ctx, { id, path: null });
  let project: Project;
  try {
    project = await ctx.db.project.create({
      data: {
        ...settingsData(input),
        id,
        name: input.name,
        filename: `${input.name}.gns3`,
        path: customDir && customDir !== defaultDir ? customDir : null,
        status: "opened",
      },
    });
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    // A concurrent create of the same project_id won: GNS3 answers a known id with that project.
    const raced = input.projectId ? await ctx.db.project.findUnique({ where: { id: input.projectId } }) : null;
    if (raced) return raced;
    throw nameTaken(input.name);
  }
  try {
    await writeTopologyFile(ctx, project);
  } catch (e) {
    await ctx.db.project.delete({ where: { id } });
    throw new ConflictError(`Could not create project directory: ${(e as Error).message}`);
  }
  await publishControllerEvent(ctx, { type: "project.created", project: project });
  return project;
}

/** Partial update; emits project.updated only when something changed. The topology file keeps its name. */
export async function updateProject(ctx: AppContext, projectId: string, raw: UpdateProjectInput): Promise<Project> {
  const input = parseInput(updateProjectSchema, raw);
  const project = await getProject(ctx, projectId);
  const data = settingsData(input);
  if (input.name !== undefined && input.name !== null) data.name = input.name;
  if (data.name !== undefined) assertProjectName(data.name);
  if (input.path && (await checkedPath(ctx, input.path)) !== (await realDir(projectDir(ctx, project)))) {
    throw new ConflictError("Moving a project to another directory is not supported");
  }
  const changed = Object.entries(data).some(([k, v]) => project[k as keyof Project] !== v);
  if (!changed) return project;
  if (data.name && data.name !== project.name && (await ctx.db.project.findUnique({ where: { name: data.name } }))) {
    throw nameTaken(data.name);
  }
  let updated: Project;
  try {
    updated = await ctx.db.project.update({ where: { id: projectId }, data });
  } catch (e) {
    if (isUniqueViolation(e)) throw nameTaken(data.name!);
    throw e;
  }
  await writeTopologyFile(ctx, updated);
  await publishControllerEvent(ctx, { type: "project.updated", project: updated, changed: changedFields(project, updated) });
  return updated;
}

export async function deleteProject(ctx: AppContext, projectId: string): Promise<void> {
  const project = await getProject(ctx, projectId);
  const dir = projectDir(ctx, project);
  if (!isStrictlyInside(projectsRoot(ctx), dir)) {
    throw new ConflictError(
      `Project '${project.name}' cannot be deleted because it is not in the default project directory: '${projectsRoot(ctx)}'`,
    );
  }
  if (project.status === "opened") await ctx.services.emulation.runners.release(projectId, project.runnerId);
  await ctx.services.emulation.placement.releaseProject(projectId, "delete");
  await ctx.db.project.delete({ where: { id: projectId } });
  await fs.rm(dir, { recursive: true, force: true });
  const closed = { ...project, status: "closed" };
  if (project.status === "opened") await publishControllerEvent(ctx, { type: "project.closed", project: closed });
  await publishControllerEvent(ctx, { type: "project.deleted", project: closed });
}

/**
 * Opening drops links that never got their second end (link.deleted, as GNS3 does on load), takes the nodes'
 * console ports again (holdProjectConsoles), announces the topology on the project stream
 * (node/link/drawing.created, with the ports the nodes now hold), then project.opened.
 */
export async function openProject(ctx: AppContext, projectId: string): Promise<Project> {
  const project = await getProject(ctx, projectId);
  if (project.status === "opened") return project;
  const links = await ctx.db.link.findMany({ where: { projectId }, include: { endpoints: true } });
  for (const dangling of links.filter((l) => l.endpoints.length !== 2)) {
    const nodes = await linkEndNodes(ctx.db, [dangling]);
    await ctx.db.link.delete({ where: { id: dangling.id } });
    await publishTopologyEvent(ctx, projectId, { type: "link.deleted", link: dangling, nodes });
  }
  const opened = await withUniqueRetry(() =>
    ctx.db.$transaction(async (tx) => {
      await holdProjectConsoles(tx, projectId, ctx.config);
      return tx.project.update({ where: { id: projectId }, data: { status: "opened" } });
    }),
  );
  await ctx.services.emulation.runners.apply(projectId, { do: "wireProject" });
  await announceTopology(ctx, opened);
  await publishControllerEvent(ctx, { type: "project.opened", project: opened });
  return opened;
}

/**
 * Idempotent. The instance that ran the project stops its processes, links and devices; like GNS3, the answer waits
 * for it, so a client re-opening at once finds its nodes stopped. That is recorded before project.closed, which
 * drops the read views of every instance (GNS3 announces no node change after it). Then the nodes' console ports go
 * back to their computes (GNS3's compute releases them on close), once nothing of the project listens on them.
 */
export async function closeProject(ctx: AppContext, projectId: string): Promise<Project> {
  const project = await getProject(ctx, projectId);
  if (project.status === "closed") return project;
  const closed = await ctx.db.project.update({ where: { id: projectId }, data: { status: "closed", runnerId: null } });
  await ctx.services.emulation.runners.release(projectId, project.runnerId);
  await ctx.services.emulation.placement.releaseProject(projectId, "close");
  await ctx.db.node.updateMany({ where: { projectId, nodeType: { notIn: alwaysOnTypes() }, status: { not: "stopped" } }, data: { status: "stopped" } });
  await ctx.db.link.updateMany({ where: { projectId, capturing: true }, data: { capturing: false, captureComputeId: null } });
  await writeTopologyFile(ctx, closed);
  await publishControllerEvent(ctx, { type: "project.closed", project: closed });
  await releaseProjectConsoles(ctx.db, projectId);
  return closed;
}

/** GNS3 counts what is loaded in memory: a closed project reports 0 nodes/links/drawings, but its snapshots. */
export async function projectStats(ctx: AppContext, projectId: string) {
  const project = await getProject(ctx, projectId);
  const where = { projectId };
  const opened = project.status === "opened";
  const [nodes, links, drawings, snapshots] = await Promise.all([
    opened ? ctx.db.node.count({ where }) : 0,
    opened ? ctx.db.link.count({ where }) : 0,
    opened ? ctx.db.drawing.count({ where }) : 0,
    ctx.db.snapshot.count({ where }),
  ]);
  return { nodes, links, drawings, snapshots };
}

/**
 * Registers (opened) the project stored in a .gns3 file where it lies; the file's ids are kept. A project whose
 * id is already known is simply opened.
 */
export async function loadProject(ctx: AppContext, userFile: string): Promise<Project> {
  if (!ctx.config.local) throw new LocalOnlyError("Loading a project from a path");
  const cannot = (why: string) => new ConflictError(`Could not load topology ${userFile}: ${why}`);
  const file = await checkedPath(ctx, userFile);
  const doc = parseTopology(await readTopologyJson(file, cannot));
  if (await ctx.db.project.findUnique({ where: { id: doc.project_id } })) return openProject(ctx, doc.project_id);
  assertProjectName(doc.name);
  if (await ctx.db.project.findUnique({ where: { name: doc.name } })) throw nameTaken(doc.name);
  const dir = path.dirname(file);
  let project: Project;
  try {
    project = await ctx.db.$transaction(async (tx) => {
      const created = await tx.project.create({
        data: {
          ...projectSettings(doc),
          id: doc.project_id,
          name: doc.name,
          filename: path.basename(file),
          path: dir === projectDir(ctx, { id: doc.project_id, path: null }) ? null : dir,
          status: "opened",
        },
      });
      await insertTopology(tx, created.id, doc, ctx.config);
      await holdProjectConsoles(tx, created.id, ctx.config);
      return created;
    }, TOPOLOGY_TRANSACTION);
  } catch (e) {
    if (isUniqueViolation(e)) throw cannot("the topology reuses ids or names already known to this server");
    throw e;
  }
  await publishControllerEvent(ctx, { type: "project.created", project: project });
  await ctx.services.emulation.runners.apply(project.id, { do: "wireProject" });
  await announceTopology(ctx, project);
  await publishControllerEvent(ctx, { type: "project.opened", project: project });
  return project;
}

/** A .gns3 file is a regular file of bounded size; errors name the OS error, never the file's content. */
async function readTopologyJson(file: string, cannot: (why: string) => Error): Promise<unknown> {
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) throw cannot("not a regular file");
    if (stat.size > MAX_TOPOLOGY_BYTES) throw cannot(`larger than ${MAX_TOPOLOGY_BYTES} bytes`);
    text = await fs.readFile(file, "utf8");
  } catch (e) {
    // Node's file-system errors name the code, the call and the path: nothing of the file.
    throw e instanceof ConflictError ? e : cannot((e as Error).message);
  }
  try {
    return parseJson(text); // a file on disk is client input too: no prototype keys, bounded depth
  } catch (e) {
    throw cannot(e instanceof UnsafeJsonError ? e.message : "the file is not valid JSON");
  }
}

/** The real path of a directory that may not exist yet. */
const realDir = (dir: string) => fs.realpath(dir).catch(() => dir);

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
