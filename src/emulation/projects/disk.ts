import fs from "node:fs/promises";
import path from "node:path";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { gns3Body } from "../rest/json.js";
import { readTopology } from "../topology-file/rows.js";
import { projectDir } from "./serialize.js";

/**
 * The database is the source of truth; the `<name>.gns3` file in the project directory is a copy kept for GNS3
 * tools that read it. It is rewritten (write to .tmp, then rename) whenever a project-level operation changes
 * the project, and refreshed before the files API serves it.
 */
export async function writeTopologyFile(ctx: AppContext, project: Project): Promise<string> {
  const dir = projectDir(ctx, project);
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, project.filename);
  await fs.writeFile(`${file}.tmp`, gns3Body(await readTopology(ctx.db, project)));
  await fs.rename(`${file}.tmp`, file);
  return file;
}
