import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Project, Snapshot } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { publishControllerEvent, publishTopologyEvent } from "../core/events.js";
import { resolveInside } from "../files/safe-path.js";
import { parseInput } from "../../platform/input.js";
import { assertFileName } from "../core/names.js";
import { holdProjectConsoles } from "../node-model/console.js";
import { announceTopology, topologyRows } from "../projects/announce.js";
import { writeTopologyFile } from "../projects/disk.js";
import { getOpenedProject, getProject } from "../projects/lookup.js";
import { projectDir } from "../projects/serialize.js";
import { STAGING_PREFIX } from "../projects/staging.js";
import { assertProjectStopped, projectArchive } from "../projects/transfer.js";
import { archiveToBuffer, archiveTopologyJson, followNodeIds, withArchive } from "../topology-file/archive.js";
import { parseTopology } from "../topology-file/document.js";
import { insertTopology, projectSettings, idsForTarget, TOPOLOGY_TRANSACTION } from "../topology-file/rows.js";
import { newSnapshotSchema, type NewSnapshot } from "./schema.js";
import { listSnapshotRows, snapshotsDir, writeSnapshotsConf } from "../projects/snapshot-store.js";

const pad = (n: number) => String(n).padStart(2, "0");
/** GNS3's fixed description; a client-supplied one is ignored upstream, and here it is kept (compat §16.3). */
const defaultDescription = (name: string, d: Date) =>
  `Snapshot '${name}' taken on ${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} at ` +
  `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

export const listSnapshots = async (ctx: AppContext, projectId: string) => {
  await getProject(ctx, projectId);
  return listSnapshotRows(ctx, projectId);
};

async function getSnapshot(ctx: AppContext, projectId: string, snapshotId: string): Promise<Snapshot> {
  const snapshot = await ctx.db.snapshot.findFirst({ where: { id: snapshotId, projectId } });
  if (!snapshot) throw new NotFoundError(`Snapshot ID ${snapshotId} doesn't exist`);
  return snapshot;
}

/** The snapshot file path; a name that would leave snapshots/ (e.g. "../x", "a/b") is refused. */
async function snapshotFile(ctx: AppContext, project: Project, filename: string): Promise<string> {
  const dir = snapshotsDir(ctx, project);
  await fs.mkdir(dir, { recursive: true });
  const file = await resolveInside(dir, filename).catch(() => undefined);
  if (!file || path.dirname(file) !== (await fs.realpath(dir))) throw new ConflictError(`Invalid snapshot name ${filename}`);
  return file;
}

/** A snapshot name is unique in its project: a taken one is ALREADY_EXISTS, as every taken client-chosen name. */
const nameTaken = (name: string) => new ConflictError(`The snapshot name ${name} already exists`, { target: "name", reason: "already_exists" });

export async function createSnapshot(
  ctx: AppContext,
  projectId: string,
  raw: NewSnapshot,
): Promise<Snapshot> {
  const input = parseInput(newSnapshotSchema, raw);
  assertFileName("Snapshot", input.name);
  const project = await getOpenedProject(ctx, projectId);
  if (await ctx.db.snapshot.findUnique({ where: { projectId_name: { projectId, name: input.name } } })) {
    throw nameTaken(input.name);
  }
  await assertProjectStopped(ctx, projectId, "take a snapshot");
  const filename = `${input.name}.gns3snapshot`;
  const file = await snapshotFile(ctx, project, filename);
  if (await fs.stat(file).catch(() => undefined)) throw new ConflictError(`The snapshot file '${filename}' already exists`);

  const zip = await projectArchive(ctx, project, { keepComputeIds: true, resetMacAddresses: false, includeSnapshots: false, compress: false });
  try {
    await fs.writeFile(file, await archiveToBuffer(zip), { flag: "wx" });
  } catch (e) {
    // A concurrent create of the same name got there first.
    if ((e as NodeJS.ErrnoException).code === "EEXIST") throw nameTaken(input.name);
    throw e;
  }
  const now = new Date();
  let snapshot: Snapshot;
  try {
    snapshot = await ctx.db.snapshot.create({
      data: {
        id: randomUUID(),
        projectId,
        name: input.name,
        filename,
        description: input.description || defaultDescription(input.name, now),
        createdAt: Math.floor(now.getTime() / 1000),
      },
    });
  } catch (e) {
    await fs.rm(file, { force: true });
    throw (e as { code?: string }).code === "P2002" ? nameTaken(input.name) : e;
  }
  await writeSnapshotsConf(ctx, project);
  return snapshot;
}

export async function deleteSnapshot(ctx: AppContext, projectId: string, snapshotId: string): Promise<void> {
  const project = await getOpenedProject(ctx, projectId);
  const snapshot = await getSnapshot(ctx, projectId, snapshotId);
  await ctx.db.snapshot.delete({ where: { id: snapshot.id } });
  await fs.rm(await snapshotFile(ctx, project, snapshot.filename), { force: true });
  await writeSnapshotsConf(ctx, project);
}

/**
 * Replaces the project's topology (database rows) and project-files/ with the snapshot's, keeping the
 * project's current name, filename and auto_* flags — so a restore after a rename restores (upstream it does
 * not, compat §16.4). Ids are kept when the snapshot was taken of this very project. Running nodes (other than
 * the always-running builtins) make it a 409: a restore must not orphan their processes.
 */
export async function restoreSnapshot(ctx: AppContext, projectId: string, snapshotId: string): Promise<Project> {
  const project = await getOpenedProject(ctx, projectId);
  const snapshot = await getSnapshot(ctx, projectId, snapshotId);
  await assertProjectStopped(ctx, projectId, "restore a snapshot");

  const file = await snapshotFile(ctx, project, snapshot.filename);
  await fs.access(file).catch(() => {
    throw new ConflictError(`The snapshot file '${snapshot.filename}' could not be read`);
  });
  // Files first into a staging directory beside the project, so a bad archive changes nothing.
  const dir = projectDir(ctx, project);
  const replaced = await topologyRows(ctx, project); // what the restore may take away: announced as deleted after it
  const staging = await fs.mkdtemp(`${dir}${STAGING_PREFIX.restore}`);
  try {
    const doc = await withArchive(file, ctx.config.archiveLimits, async (archive) => {
      const { doc, nodeIds } = idsForTarget(parseTopology(await archiveTopologyJson(archive)), projectId);
      await archive.extract(staging, {
        skip: (name) => name === "snapshots" || name.startsWith("snapshots/"),
        rename: followNodeIds(nodeIds),
      });
      return doc;
    });
    const { autoStart, autoOpen, autoClose, ...settings } = projectSettings(doc);
    await ctx.db.$transaction(async (tx) => {
      await tx.link.deleteMany({ where: { projectId } });
      await tx.node.deleteMany({ where: { projectId } });
      await tx.drawing.deleteMany({ where: { projectId } });
      await tx.project.update({ where: { id: projectId }, data: settings });
      await insertTopology(tx, projectId, doc, ctx.config);
      await holdProjectConsoles(tx, projectId, ctx.config);
    }, TOPOLOGY_TRANSACTION);
    await fs.rm(path.join(dir, "project-files"), { recursive: true, force: true });
    for (const name of await fs.readdir(staging)) {
      await fs.rm(path.join(dir, name), { recursive: true, force: true });
      await fs.rename(path.join(staging, name), path.join(dir, name));
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
  const restored = await getProject(ctx, projectId);
  await writeTopologyFile(ctx, restored);
  // The runner drops what the restore took away and wires what it brought, before the topology is announced.
  await ctx.services.emulation.runners.apply(projectId, { do: "wireProject" });
  await announceTopology(ctx, restored, replaced);
  await publishTopologyEvent(ctx, projectId, { type: "snapshot.restored", snapshot });
  await publishControllerEvent(ctx, { type: "project.opened", project: restored });
  return restored;
}
