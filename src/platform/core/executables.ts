import fs from "node:fs";
import path from "node:path";

/** Absolute path of an executable file `name` in $PATH (or `explicit`, when given), or null. */
export function findOnPath(name: string, explicit?: string): string | null {
  const candidates = explicit ? [explicit] : (process.env.PATH ?? "/usr/bin:/bin").split(":").map((d) => path.join(d, name));
  return (
    candidates.find((c) => {
      try {
        fs.accessSync(c, fs.constants.X_OK);
        return fs.statSync(c).isFile();
      } catch {
        return false;
      }
    }) ?? null
  );
}
