import fs from "node:fs/promises";
import path from "node:path";
import type { AppContext } from "../../platform/context.js";
import { projectsRoot } from "./serialize.js";

/**
 * Directories that hold a project on its way in, made by mkdtemp (six random characters after the prefix) in
 * `<data dir>/projects`: an import's extraction, an uploaded archive, a snapshot restore (named after the
 * project's directory, beside it). A kill -9 leaves them behind, up to the upload limit each.
 */
export const STAGING_PREFIX = { import: ".import-", upload: ".upload-", restore: ".restore-" } as const;
const STAGING_NAME = /^(\.import-|\.upload-|[0-9a-f-]{36}\.restore-)[A-Za-z0-9]{6}$/;

/**
 * Start-up: removes the staging directories a crash interrupted in `<data dir>/projects` (those in an allowed root
 * of local mode are the operator's directories: left alone). Only mkdtemp's names of STAGING_PREFIX.
 */
export async function removeInterruptedStaging(ctx: AppContext): Promise<string[]> {
  const root = projectsRoot(ctx);
  const entries = await fs.readdir(root, { withFileTypes: true }).catch(() => []);
  const staging = entries.filter((e) => e.isDirectory() && STAGING_NAME.test(e.name)).map((e) => path.join(root, e.name));
  for (const dir of staging) await fs.rm(dir, { recursive: true, force: true });
  return staging;
}
