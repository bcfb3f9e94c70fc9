import fs from "node:fs/promises";
import type { Project } from "../../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../../platform/context.js";
import { ConflictError, InvalidInputError } from "../../../platform/core/errors.js";
import { resolveInside } from "../../files/safe-path.js";
import { openProject } from "../../projects/operations.js";
import { assertProjectId, projectDir } from "../../projects/serialize.js";
import { importProject, projectArchive } from "../../projects/transfer.js";
import { withArchive } from "../../topology-file/archive.js";
import { getComputeProject } from "./operations.js";

/**
 * The 2.1 compute archive routes (compat §15; gone from 2.2, restored here). The archive is the controller's
 * .gns3project format (compat §13): project.gns3 from the database plus the project directory, compute ids kept.
 */

/** GNS3 reads `include_images` as an integer flag. */
export function parseIncludeImages(value: string | undefined): boolean {
  if (value === undefined || value === "0") return false;
  if (value === "1") return true;
  throw new InvalidInputError(`include_images must be 0 or 1, not ${value}`);
}

/**
 * `includeImages` asks for the disk images of the nodes; the node types Patchbay runs (vpcs, hub, switch) use
 * none and Patchbay keeps no image store, so there is nothing to add and the archive is the same either way.
 * Running nodes are allowed, as on GNS3's compute (the controller's export is the one that refuses them).
 */
export async function exportComputeProject(ctx: AppContext, projectId: string, _includeImages: boolean) {
  const project = await getComputeProject(ctx, projectId);
  const archive = await projectArchive(ctx, project, {
    keepComputeIds: true,
    resetMacAddresses: false,
    includeSnapshots: false,
    compress: true,
  });
  return { filename: `${project.name}.gns3project`, archive };
}

/**
 * Puts an archive's files into the compute project. A project unknown to this instance is created from the
 * archive's project.gns3 (the controller's import, then opened); a known one (re-opened if closed) receives the
 * archive's files, overwriting same-named ones, while its topology stays the database's. Every entry is proven
 * safe before anything is written: an escaping entry (zip-slip, symlink) refuses the whole archive (409).
 */
export async function importComputeProject(ctx: AppContext, projectId: string, archiveFile: string): Promise<Project> {
  assertProjectId(projectId);
  const existing = await ctx.db.project.findUnique({ where: { id: projectId } });
  if (!existing) return openProject(ctx, (await importProject(ctx, projectId, archiveFile, { autoClose: false })).id);
  return withArchive(archiveFile, ctx.config.archiveLimits, async (archive) => {
    const dir = projectDir(ctx, existing);
    await fs.mkdir(dir, { recursive: true });
    for (const e of archive.entries) {
      await resolveInside(dir, e.name).catch(() => {
        throw new ConflictError(`Cannot import project, unsafe archive entry: ${e.name}`);
      });
    }
    const project = existing.status === "opened" ? existing : await openProject(ctx, projectId);
    await archive.extract(dir);
    return project;
  });
}
