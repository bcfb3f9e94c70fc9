import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { AppContext } from "../../platform/context.js";
import { PayloadTooLargeError } from "../images/store.js";
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
    await writeAtMost(body, file, limit);
    return await use(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Writes `body` to `file`; more than `limit` bytes → 413, the rest of the body read and dropped. */
async function writeAtMost(body: Readable, file: string, limit: number): Promise<void> {
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      done(size > limit ? new PayloadTooLargeError(`The archive is larger than the upload limit (${limit} bytes)`) : null, chunk);
    },
  });
  // Piped rather than part of the pipeline: a refusal must not destroy the body (that would reset the client's
  // connection before it reads the 413).
  const written = pipeline(meter, createWriteStream(file, { flags: "wx", mode: 0o600 }));
  body.on("error", (e) => meter.destroy(e));
  body.pipe(meter);
  try {
    await written;
  } catch (e) {
    if (!body.readableEnded && !body.destroyed) body.unpipe(meter).resume();
    throw e;
  }
}
