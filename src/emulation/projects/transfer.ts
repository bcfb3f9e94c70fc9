import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type yazl from "yazl";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError } from "../../platform/core/errors.js";
import { publishControllerEvent } from "../core/events.js";
import { BUILTIN_TYPES } from "../node-model/serialize.js";
import { adoptSnapshots } from "./snapshot-store.js";
import { archiveTopologyJson, createArchive, followNodeIds, withArchive } from "../topology-file/archive.js";
import { parseTopology } from "../topology-file/document.js";
import { prepareForExport, type ExportOptions } from "../topology-file/export.js";
import { insertTopology, projectSettings, readTopology, idsForTarget, TOPOLOGY_TRANSACTION } from "../topology-file/rows.js";
import { withArchiveFile } from "./archive-upload.js";
import { writeTopologyFile } from "./disk.js";
import { getProject } from "./lookup.js";
import { assertProjectName, checkedPath, freeProjectName, isUniqueViolation, LocalOnlyError } from "./operations.js";
import { assertProjectId, projectDir } from "./serialize.js";
import { STAGING_PREFIX } from "./staging.js";

/** Builtins (hub, switch, cloud, nat, …) always run; anything else must be stopped to be archived consistently. */
export async function assertProjectStopped(ctx: AppContext, projectId: string, purpose = "export it"): Promise<void> {
  const running = await ctx.db.node.count({
    where: { projectId, status: { not: "stopped" }, nodeType: { notIn: [...BUILTIN_TYPES] } },
  });
  if (running) throw new ConflictError(`Project must be stopped in order to ${purpose}`);
}

/** The project as a .gns3 document plus its directory, zipped (compat §13). */
export async function projectArchive(
  ctx: AppContext,
  project: Project,
  opts: ExportOptions & { includeSnapshots: boolean; compress: boolean },
): Promise<yazl.ZipFile> {
  const doc = prepareForExport(await readTopology(ctx.db, project), opts);
  return createArchive(projectDir(ctx, project), doc, { ...opts, topologyFile: project.filename });
}

export interface ExportRequest extends ExportOptions {
  includeSnapshots: boolean;
  /** false = stored entries (GNS3 `compression=none`). */
  compress: boolean;
}

export async function exportProject(ctx: AppContext, projectId: string, opts: ExportRequest) {
  const project = await getProject(ctx, projectId);
  await assertProjectStopped(ctx, projectId);
  return { filename: `${project.name}.gns3project`, archive: await projectArchive(ctx, project, opts) };
}

export interface ImportOptions {
  name?: string;
  /** Destination directory (local servers only). */
  path?: string;
  autoClose: boolean;
}

/**
 * Creates project `projectId` (closed) from a .gns3project archive. Everything is checked and extracted into a
 * staging directory first, so a bad archive leaves neither rows nor files behind. Ids are regenerated unless
 * the archive's project id is the target id (GNS3's rule).
 */
export async function importProject(ctx: AppContext, projectId: string, archiveFile: string, opts: ImportOptions): Promise<Project> {
  assertProjectId(projectId);
  if (opts.path?.includes(".gns3")) throw new ConflictError("The destination path should not contain .gns3");
  if (opts.path && !ctx.config.local) throw new LocalOnlyError("Importing to a custom path");
  if (opts.name) assertProjectName(opts.name);
  const customDir = opts.path ? await checkedPath(ctx, opts.path) : undefined;
  if (await ctx.db.project.findUnique({ where: { id: projectId } })) throw new ConflictError(`Project ID ${projectId} already exists`, { reason: "already_exists" });
  return withArchive(archiveFile, ctx.config.archiveLimits, async (archive) => {
  const parsed = parseTopology(await archiveTopologyJson(archive));
  const { doc, nodeIds } = idsForTarget(parsed, projectId);
  assertProjectName(opts.name || doc.name);
  const name = await freeProjectName(ctx, opts.name || doc.name);
  const dir = customDir ?? projectDir(ctx, { id: projectId, path: null });
  if (await fs.access(dir).then(() => true, () => false)) throw new ConflictError(`Cannot import project: ${dir} already exists`);

  // Staged beside the destination so the final move is a rename on the same filesystem.
  await fs.mkdir(path.dirname(dir), { recursive: true });
  const staging = await fs.mkdtemp(path.join(path.dirname(dir), STAGING_PREFIX.import));
  let project: Project;
  try {
    await archive.extract(staging, { rename: followNodeIds(nodeIds) });
    project = await ctx.db.$transaction(async (tx) => {
      const created = await tx.project.create({
        data: {
          ...projectSettings(doc),
          id: projectId,
          name,
          filename: `${name}.gns3`,
          path: customDir ?? null,
          status: "closed",
          autoStart: false,
          autoOpen: false,
          autoClose: opts.autoClose,
        },
      });
      await insertTopology(tx, projectId, doc, ctx.config);
      return created;
    }, TOPOLOGY_TRANSACTION);
  } catch (e) {
    await fs.rm(staging, { recursive: true, force: true });
    if (isUniqueViolation(e)) throw new ConflictError("Cannot import project: the topology reuses an id or a node name");
    throw e;
  }
  try {
    await fs.rename(staging, dir);
  } catch (e) {
    await ctx.db.project.delete({ where: { id: projectId } });
    await fs.rm(staging, { recursive: true, force: true });
    throw new ConflictError(`Could not import the project: ${(e as Error).message}`);
  }
  await writeTopologyFile(ctx, project);
  await adoptSnapshots(ctx, project);
  await publishControllerEvent(ctx, { type: "project.created", project: project });
  return project;
  });
}

export interface DuplicateInput {
  name: string;
  path?: string | null;
  resetMacAddresses?: boolean;
}

/**
 * A closed copy with new ids, made the way GNS3 does for remote computes: archive the source (running nodes
 * allowed, snapshots included) and import the archive. Auto-open/start/close are off on the copy.
 */
export async function duplicateProject(ctx: AppContext, projectId: string, input: DuplicateInput): Promise<Project> {
  const source = await getProject(ctx, projectId);
  assertProjectName(input.name);
  if (input.path && !ctx.config.local) throw new LocalOnlyError("Duplicating to a custom path");
  const zip = await projectArchive(ctx, source, {
    keepComputeIds: true,
    resetMacAddresses: input.resetMacAddresses === true,
    includeSnapshots: true,
    compress: false,
  });
  try {
    return await withArchiveFile(ctx, zip.outputStream as Readable, Infinity, (file) =>
      importProject(ctx, randomUUID(), file, { name: input.name, path: input.path ?? undefined, autoClose: false }),
    );
  } catch (e) {
    if (e instanceof ConflictError) throw new ConflictError(`Cannot duplicate project: ${e.message}`);
    throw e;
  }
}
