import fs from "node:fs/promises";
import path from "node:path";
import { ForbiddenError } from "../../platform/errors.js";

/**
 * The one door to the disk: every user-supplied path (project files, node files, archive entries) is resolved
 * here. The path is normalised and joined to `root` (an absolute user path wins the join, as in GNS3, and is
 * then refused), symlinks are followed — for a file that does not exist yet through its deepest existing
 * parent — and the result must lie strictly inside the real `root`. Anything else is GNS3's bare 403.
 */
export async function resolveInside(root: string, userPath: string): Promise<string> {
  if (userPath.includes("\0")) throw forbidden();
  const realRoot = await fs.realpath(root);
  const target = await realpathAllowMissing(path.resolve(realRoot, path.normalize(userPath)));
  if (!isStrictlyInside(realRoot, target)) throw forbidden();
  return target;
}

export function isStrictlyInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

const forbidden = () => new ForbiddenError("403: Forbidden");

/** realpath of the deepest existing ancestor, with the missing tail appended. */
async function realpathAllowMissing(p: string): Promise<string> {
  const missing: string[] = [];
  let current = p;
  for (;;) {
    try {
      return path.join(await fs.realpath(current), ...missing.reverse());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A dangling symlink is not "missing": following it could still lead outside, so refuse it.
      if ((code !== "ENOENT" && code !== "ENOTDIR") || (await isSymlink(current))) throw forbidden();
      const parent = path.dirname(current);
      if (parent === current) throw forbidden();
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

async function isSymlink(p: string): Promise<boolean> {
  try {
    return (await fs.lstat(p)).isSymbolicLink();
  } catch {
    return false;
  }
}
