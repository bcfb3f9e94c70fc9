import fs from "node:fs";
import path from "node:path";
import { StartupError } from "./startup-errors.js";

/**
 * Creates the data directory and proves it writable before anything else uses it. Missing parents are made one
 * at a time: Node's recursive mkdir loops forever under /proc (the start-up hung there), a plain mkdir fails.
 */
export function prepareDataDir(dir: string): void {
  const missing: string[] = [];
  let at = dir;
  while (!fs.existsSync(at) && path.dirname(at) !== at) {
    missing.unshift(at);
    at = path.dirname(at);
  }
  try {
    if (!fs.statSync(at).isDirectory()) throw Object.assign(new Error(`${at} is not a directory`), { code: "ENOTDIR" });
    for (const d of missing) fs.mkdirSync(d);
    probeWritable(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new StartupError(`data directory ${dir} is not usable (${code}): choose a writable directory with PATCHBAY_DATA_DIR or --data-dir`);
  }
}

/** Writes and removes a small file: the directory accepts new files (also the readiness check). */
export function probeWritable(dir: string): void {
  const probe = path.join(dir, `.write-probe-${process.pid}`);
  fs.writeFileSync(probe, "");
  fs.unlinkSync(probe);
}
