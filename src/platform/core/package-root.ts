import fs from "node:fs";
import path from "node:path";

/**
 * The package's directory (package.json, prisma/, src/), found from wherever this code runs: src/ under tsx and
 * vitest, dist/ compiled, or the one-file bundle `npm start` loads (dist/patchbay.cjs). Files the server reads
 * beside its code are named from here, so they do not depend on how deep the running module sits.
 */
export const PACKAGE_ROOT = findPackageRoot(import.meta.dirname);

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (dir === path.dirname(dir)) throw new Error(`no package.json above ${from}`);
  }
}

/** A path inside the package. */
export const packagePath = (...parts: string[]): string => path.join(PACKAGE_ROOT, ...parts);
