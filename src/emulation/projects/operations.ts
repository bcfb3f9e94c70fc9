import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError } from "../../platform/errors.js";
import { publishControllerEvent, publishProjectEvent } from "../events.js";
import { isStrictlyInside } from "../files/safe-path.js";
import { linkToRest } from "../links/serialize.js";
import { parseTopology } from "../topology-file/document.js";
import { insertTopology, projectSettings, TOPOLOGY_TRANSACTION } from "../topology-file/rows.js";
import { announceTopology } from "./announce.js";
import { writeTopologyFile } from "./disk.js";
import { getProject } from "./lookup.js";
import { assertProjectId, projectDir, projectsRoot, projectToRest } from "./serialize.js";

/** Project settings a client may set on create and update (compat §3.2, §3.6). */
export interface ProjectSettings {
  autoClose?: boolean;
  autoOpen?: boolean;
  autoStart?: boolean;
  sceneHeight?: number;
  sceneWidth?: number;
  zoom?: number;
  gridSize?: number;
  drawingGridSize?: number;
  showLayers?: boolean;
  snapToGrid?: boolean;
  showGrid?: boolean;
  showInterfaceLabels?: boolean;
  supplier?: { logo: string; url: string } | null;
  variables?: { name: string; value?: string }[] | null;
}

export interface CreateProjectInput extends ProjectSettings {
  name: string;
  projectId?: string | null;
  path?: string | null;
}

export interface UpdateProjectInput extends ProjectSettings {
  name?: string | null;
  path?: string | null;
}

/** A refusal GNS3 answers with a bare 403 (no body): features reserved to a local server. */
export class LocalOnlyError extends ForbiddenError {
  constructor(what: string) {
    super(`${what} is only allowed on a local server`);
  }
}

export const isUniqueViolation = (e: unknown) => (e as { code?: string })?.code === "P2002";

const nameTaken = (name: string) => new ConflictError(`Project "${name}" already exists`);

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

/** A user-chosen project directory: absolute, no quotes, under the projects root unless the server is local. */
function checkedPath(ctx: AppContext, userPath: string): string {
  const dir = path.resolve(userPath);
  if (userPath.includes('"')) throw new ForbiddenError("The path is not allowed");
  if (!ctx.config.local && !isStrictlyInside(projectsRoot(ctx), dir)) throw new ForbiddenError("The path is not allowed");
  return dir;
}

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
export async function createProject(ctx: AppContext, input: CreateProjectInput): Promise<Project> {
  if (input.projectId) {
    const existing = await ctx.db.project.findUnique({ where: { id: input.projectId } });
    if (existing) return existing;
  }
  const id = input.projectId ?? randomUUID();
  assertProjectId(id);
  let customDir: string | null = null;
  if (input.path) {
    customDir = checkedPath(ctx, input.path);
    if (!input.projectId && (await exists(customDir))) throw new ForbiddenError(`The path ${input.path} already exist.`);
  }
  if (await ctx.db.project.findUnique({ where: { name: input.name } })) throw nameTaken(input.name);
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
    if (isUniqueViolation(e)) throw nameTaken(input.name);
    throw e;
  }
  try {
    await writeTopologyFile(ctx, project);
  } catch (e) {
    await ctx.db.project.delete({ where: { id } });
    throw new ConflictError(`Could not create project directory: ${(e as Error).message}`);
  }
  await publishControllerEvent(ctx, "project.created", projectToRest(ctx, project));
  return project;
}

/** Partial update; emits project.updated only when something changed. The topology file keeps its name. */
export async function updateProject(ctx: AppContext, projectId: string, input: UpdateProjectInput): Promise<Project> {
  const project = await getProject(ctx, projectId);
  const data = settingsData(input);
  if (input.name !== undefined && input.name !== null) data.name = input.name;
  if (input.path && checkedPath(ctx, input.path) !== projectDir(ctx, project)) {
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
  await publishControllerEvent(ctx, "project.updated", projectToRest(ctx, updated));
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
  await ctx.db.project.delete({ where: { id: projectId } });
  await fs.rm(dir, { recursive: true, force: true });
  const closed = { ...project, status: "closed" };
  if (project.status === "opened") await publishControllerEvent(ctx, "project.closed", projectToRest(ctx, closed));
  await publishControllerEvent(ctx, "project.deleted", projectToRest(ctx, closed));
}

/**
 * Opening drops links that never got their second end (link.deleted, as GNS3 does on load), announces the
 * topology on the project stream (node/link/drawing.created), then project.opened.
 */
export async function openProject(ctx: AppContext, projectId: string): Promise<Project> {
  const project = await getProject(ctx, projectId);
  if (project.status === "opened") return project;
  const links = await ctx.db.link.findMany({ where: { projectId }, include: { endpoints: true } });
  for (const dangling of links.filter((l) => l.endpoints.length !== 2)) {
    await ctx.db.link.delete({ where: { id: dangling.id } });
    await publishProjectEvent(ctx, projectId, "link.deleted", linkToRest(dangling));
  }
  const opened = await ctx.db.project.update({ where: { id: projectId }, data: { status: "opened" } });
  await announceTopology(ctx, opened);
  await publishControllerEvent(ctx, "project.opened", projectToRest(ctx, opened));
  return opened;
}

/** Idempotent. Node processes are the runtime's: it stops them when it sees project.closed. */
export async function closeProject(ctx: AppContext, projectId: string): Promise<Project> {
  const project = await getProject(ctx, projectId);
  if (project.status === "closed") return project;
  const closed = await ctx.db.project.update({ where: { id: projectId }, data: { status: "closed" } });
  await writeTopologyFile(ctx, closed);
  await publishControllerEvent(ctx, "project.closed", projectToRest(ctx, closed));
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
export async function loadProject(ctx: AppContext, file: string): Promise<Project> {
  if (!ctx.config.local) throw new LocalOnlyError("Loading a project from a path");
  const cannot = (why: string) => new ConflictError(`Could not load topology ${file}: ${why}`);
  let json: unknown;
  try {
    json = JSON.parse(await fs.readFile(file, "utf8"));
  } catch (e) {
    throw cannot((e as Error).message);
  }
  const doc = parseTopology(json);
  if (await ctx.db.project.findUnique({ where: { id: doc.project_id } })) return openProject(ctx, doc.project_id);
  if (await ctx.db.project.findUnique({ where: { name: doc.name } })) throw nameTaken(doc.name);
  const dir = path.dirname(path.resolve(file));
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
      await insertTopology(tx, created.id, doc, ctx.config.consolePorts);
      return created;
    }, TOPOLOGY_TRANSACTION);
  } catch (e) {
    if (isUniqueViolation(e)) throw cannot("the topology reuses ids or names already known to this server");
    throw e;
  }
  await publishControllerEvent(ctx, "project.created", projectToRest(ctx, project));
  await announceTopology(ctx, project);
  await publishControllerEvent(ctx, "project.opened", projectToRest(ctx, project));
  return project;
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
