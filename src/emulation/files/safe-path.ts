import fs from "node:fs/promises";
import path from "node:path";
import { ForbiddenError } from "../../platform/core/errors.js";

/**
 * The one door to the disk: every user-supplied path (project files, node files, archive entries, symbols) is
 * resolved here. The path is normalised and joined to `root` (an absolute user path wins the join, as in GNS3, and is
 * then refused), symlinks are followed — for a file that does not exist yet through its deepest existing
 * parent — and the result must lie strictly inside the real `root`. Anything else is GNS3's bare 403.
 * Backslashes and control characters are refused up front: on this side they are not separators but file-name
 * characters, and such a file would later break the zip archives of export, snapshot and duplicate.
 */
export async function resolveInside(root: string, userPath: string): Promise<string> {
  if (UNSAFE_CHARACTERS.test(userPath)) throw forbidden();
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
const UNSAFE_CHARACTERS = /[\\\u0000-\u001f\u007f]/;

/** A single path segment that names a file: not empty, not "." or "..", no separators or NUL; hidden names are ours. */
export function isPlainName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !/[\\/\0]/.test(name) && !name.startsWith(".") && name.length <= 255;
}

/**
 * Where a file a client names gets (re)written in `root`, a directory of ours (uploaded symbols): a plain name
 * only, and the target is the real root joined with it — not followed, so a symlink planted at the name is
 * replaced by the caller's rename instead of leading out. Null when the name is not acceptable.
 */
export async function newFileInside(root: string, name: string): Promise<string | null> {
  if (!isPlainName(name)) return null;
  const realRoot = await fs.realpath(root);
  const target = path.join(realRoot, name);
  return isStrictlyInside(realRoot, target) ? target : null;
}

/**
 * A directory a client chose for a project (create, import, duplicate, load): it must lie strictly inside one
 * of `roots` once symlinks are resolved, its own and the roots'. Returns the resolved directory.
 */
export async function resolveInsideRoots(roots: string[], userPath: string): Promise<string> {
  if (UNSAFE_CHARACTERS.test(userPath)) throw forbidden();
  const target = await realpathAllowMissing(path.resolve(userPath));
  for (const root of roots) if (isStrictlyInside(await realpathAllowMissing(path.resolve(root)), target)) return target;
  throw forbidden();
}

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
