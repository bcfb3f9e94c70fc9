import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { AppContext } from "../../platform/context.js";
import { writeBodyToFile } from "../../platform/http/body-to-file.js";
import { STAGING_PREFIX } from "./staging.js";

/**
 * A project archive on its way in (an import's body, a GraphQL upload, a duplicate's own archive) goes to a
 * file, never into memory: zip entries are then read from the file one at a time (archive.ts). The file sits in
 * a private directory under <data-dir>/projects (the filesystem projects go to, unlike a RAM-backed /tmp),
 * removed once `use` is done or the upload is refused.
 */
export async function withArchiveFile<T>(ctx: AppContext, body: Readable, limit: number, use: (file: string) => Promise<T>): Promise<T> {
  const root = path.join(ctx.config.dataDir, "projects");
  await fs.mkdir(root, { recursive: true });
  const dir = await fs.mkdtemp(path.join(root, STAGING_PREFIX.upload));
  try {
    const file = path.join(dir, "archive.zip");
    await writeBodyToFile(body, file, {
      limit,
      tooLarge: `The archive is larger than the upload limit (${limit} bytes)`,
      interrupted: "The upload of the archive was interrupted",
    });
    return await use(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
