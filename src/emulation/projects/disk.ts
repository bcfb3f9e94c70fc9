import fs from "node:fs/promises";
import path from "node:path";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { writeFileAtomic } from "../files/atomic.js";
import { gns3Body } from "../rest/json.js";
import { readTopology } from "../topology-file/rows.js";
import { projectDir } from "./serialize.js";

/**
 * The database is the source of truth; the `<name>.gns3` file in the project directory is a copy kept for GNS3
 * tools that read it. It is rewritten (atomically, one writer at a time) whenever a project-level operation changes
 * the project, and refreshed before the files API serves it.
 */
export async function writeTopologyFile(ctx: AppContext, project: Project): Promise<string> {
  const dir = projectDir(ctx, project);
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, project.filename);
  // Read the project row again inside the turn: the caller's copy may predate a concurrent update that wrote first.
  await writeFileAtomic(file, async () => {
    const current = (await ctx.db.project.findUnique({ where: { id: project.id } })) ?? project;
    return gns3Body(await readTopology(ctx.db, current));
  });
  return file;
}
