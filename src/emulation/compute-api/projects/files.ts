import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { AppContext } from "../../../platform/context.js";
import { ForbiddenError, NotFoundError } from "../../../platform/core/errors.js";
import { resolveInside } from "../../files/safe-path.js";
import { writeTopologyFile } from "../../projects/disk.js";
import { projectFile, writeProjectFile } from "../../projects/files.js";
import { projectDir } from "../../projects/serialize.js";
import { getComputeProject } from "./operations.js";

/**
 * The compute's view of a project directory (compat §15, §12): list with md5 sums, read, write (parents created),
 * and follow a growing file. Every user path goes through resolveInside; the topology file is refreshed from
 * the database before it is listed or read, as on the controller's files route.
 */

const md5 = (file: string) =>
  new Promise<string>((resolve, reject) => {
    const hash = createHash("md5");
    createReadStream(file)
      .on("error", reject)
      .on("data", (c) => hash.update(c))
      .on("end", () => resolve(hash.digest("hex")));
  });

/** Every regular file under the project directory, recursively, except `.ghost` files. Symlinks are not followed. */
export async function listComputeProjectFiles(ctx: AppContext, projectId: string): Promise<{ path: string; md5sum: string }[]> {
  const project = await getComputeProject(ctx, projectId);
  await writeTopologyFile(ctx, project);
  const root = projectDir(ctx, project);
  const out: { path: string; md5sum: string }[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile() && !e.name.endsWith(".ghost")) {
        // A file removed or unreadable meanwhile is left out, as GNS3 does.
        const sum = await md5(path.join(root, child)).catch(() => undefined);
        if (sum) out.push({ path: child, md5sum: sum });
      }
    }
  };
  await walk("");
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export async function computeProjectFile(ctx: AppContext, projectId: string, userPath: string) {
  await getComputeProject(ctx, projectId);
  return projectFile(ctx, projectId, userPath);
}

/** Unlike the controller's files route, the compute creates missing parent directories. */
export async function writeComputeProjectFile(ctx: AppContext, projectId: string, userPath: string, data: Buffer): Promise<void> {
  await getComputeProject(ctx, projectId);
  await writeProjectFile(ctx, projectId, userPath, data, { createParents: true });
}

/**
 * The file a stream follows. GNS3 refuses a normalised path starting with "." (parent escapes and hidden
 * files); resolveInside then refuses absolute paths and symlinks leading out. Missing → 404.
 */
export async function computeProjectStreamFile(ctx: AppContext, projectId: string, userPath: string): Promise<string> {
  const project = await getComputeProject(ctx, projectId);
  if (path.posix.normalize(userPath.replaceAll("\\", "/")).startsWith(".")) throw new ForbiddenError("403: Forbidden");
  const file = await resolveInside(projectDir(ctx, project), userPath);
  if (!(await fs.stat(file).catch(() => undefined))?.isFile()) throw new NotFoundError("404: Not Found");
  return file;
}

/**
 * Sends the file's bytes, then keeps sending what is appended (polling every `pollMs`) until `signal` aborts —
 * `tail -f` for captures. A truncated file is followed from its start again. `write` resolves when the
 * consumer can take more (back-pressure).
 */
export async function followFile(
  file: string,
  write: (chunk: Buffer) => Promise<void>,
  signal: AbortSignal,
  pollMs = 100,
): Promise<void> {
  const handle = await fs.open(file, "r");
  try {
    const buffer = Buffer.alloc(64 * 1024);
    let position = 0;
    while (!signal.aborted) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead > 0) {
        position += bytesRead;
        await write(Buffer.from(buffer.subarray(0, bytesRead)));
        continue;
      }
      if ((await handle.stat()).size < position) position = 0;
      else await delay(pollMs, undefined, { signal }).catch(() => {});
    }
  } finally {
    await handle.close();
  }
}
