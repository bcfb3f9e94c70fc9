import fs from "node:fs/promises";
import path from "node:path";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, NotFoundError } from "../../platform/core/errors.js";
import { resolveInside } from "../files/safe-path.js";
import { writeTopologyFile } from "./disk.js";
import { getProject } from "./lookup.js";
import { projectDir } from "./serialize.js";

/** GNS3's bare aiohttp 404, which the files routes answer for anything missing. */
const notFound = () => new NotFoundError("404: Not Found");

async function locate(ctx: AppContext, projectId: string, userPath: string) {
  const project = await getProject(ctx, projectId);
  const dir = projectDir(ctx, project);
  await fs.mkdir(dir, { recursive: true });
  return { project, dir, file: await resolveInside(dir, userPath) };
}

/** A file of the project directory (opened or closed project). The topology file is refreshed from the database first. */
export async function projectFile(ctx: AppContext, projectId: string, userPath: string) {
  const { project, dir, file } = await locate(ctx, projectId, userPath);
  if (file === path.join(await fs.realpath(dir), project.filename)) await writeTopologyFile(ctx, project);
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile()) throw notFound();
  return { file, size: stat.size, modified: stat.mtime };
}

/**
 * Writes (creates or truncates) a project file. Like GNS3's controller, the parent directory must exist, unless
 * `createParents` (GNS3's compute creates them). The missing parents lie inside the project: resolveInside
 * proved it for the whole path.
 */
export async function writeProjectFile(
  ctx: AppContext,
  projectId: string,
  userPath: string,
  data: Buffer,
  opts: { createParents?: boolean } = {},
): Promise<void> {
  const { file } = await locate(ctx, projectId, userPath);
  if (opts.createParents) await fs.mkdir(path.dirname(file), { recursive: true }).catch(() => {});
  if (!(await fs.stat(path.dirname(file)).catch(() => undefined))?.isDirectory()) throw notFound();
  try {
    await fs.writeFile(file, data);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM") throw new ForbiddenError("403: Forbidden");
    throw new ConflictError(`Could not write the file: ${(e as Error).message}`);
  }
}
