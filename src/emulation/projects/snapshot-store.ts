import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Project, Snapshot } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { writeFileAtomic } from "../files/atomic.js";
import { gns3Body } from "../rest/json.js";
import { projectDir } from "./serialize.js";

/**
 * Snapshots live as uncompressed archives in <project>/snapshots/<name>.gns3snapshot, indexed by
 * snapshots/snapshots.conf (a JSON array of snapshot objects, GNS3 2.2.58+). The database is the index we
 * answer from; snapshots.conf is rewritten after every change so the directory stays readable by GNS3.
 * The directory is part of the project's: export, import and duplicate carry it (transfer.ts), and the snapshot
 * operations (snapshots/) take and restore snapshots through it.
 */
export const snapshotsDir = (ctx: AppContext, project: Pick<Project, "id" | "path">) => path.join(projectDir(ctx, project), "snapshots");

/** The GNS3 snapshot object (compat §7.1). */
export function snapshotToRest(s: Snapshot) {
  return {
    snapshot_id: s.id,
    project_id: s.projectId,
    name: s.name,
    filename: s.filename,
    description: s.description,
    created_at: s.createdAt,
  };
}

export const listSnapshotRows = (ctx: AppContext, projectId: string) =>
  ctx.db.snapshot.findMany({ where: { projectId }, orderBy: [{ createdAt: "asc" }, { name: "asc" }] });

export async function writeSnapshotsConf(ctx: AppContext, project: Project): Promise<void> {
  const dir = snapshotsDir(ctx, project);
  await fs.mkdir(dir, { recursive: true });
  const conf = path.join(dir, "snapshots.conf");
  await writeFileAtomic(conf, async () => gns3Body((await listSnapshotRows(ctx, project.id)).map(snapshotToRest)));
}

/**
 * After an import (or duplicate) that carried a snapshots/ directory: register every listed snapshot whose
 * file is really there, under fresh ids (ids are unique server-wide), and rewrite the index.
 */
export async function adoptSnapshots(ctx: AppContext, project: Project): Promise<void> {
  const dir = snapshotsDir(ctx, project);
  let listed: unknown;
  try {
    listed = JSON.parse(await fs.readFile(path.join(dir, "snapshots.conf"), "utf8"));
  } catch {
    return;
  }
  if (!Array.isArray(listed)) return;
  const files = new Set(await fs.readdir(dir));
  const seen = new Set<string>();
  for (const s of listed as Record<string, unknown>[]) {
    const name = typeof s?.name === "string" ? s.name : undefined;
    const filename = typeof s?.filename === "string" ? s.filename : `${name}.gns3snapshot`;
    if (!name || seen.has(name) || !files.has(filename) || filename !== path.basename(filename)) continue;
    seen.add(name);
    await ctx.db.snapshot.create({
      data: {
        id: randomUUID(),
        projectId: project.id,
        name,
        filename,
        description: typeof s.description === "string" ? s.description : "",
        createdAt: Number.isInteger(s.created_at) ? (s.created_at as number) : Math.floor(Date.now() / 1000),
      },
    });
  }
  await writeSnapshotsConf(ctx, project);
}
