import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import { KeyedQueue } from "../../platform/keyed-queue.js";

/** Keyed by path: one writer per file in this process, whichever server (tests run several) writes it. */
const writers = new KeyedQueue();

/**
 * Replaces `file` with what `produce` returns, atomically (a temporary file of its own, then a rename) and one
 * writer per file at a time: `produce` runs inside the turn, so a copy of database state (topology file,
 * snapshots.conf) written by concurrent requests is always the state read last, and no two writers share a
 * temporary file.
 */
export function writeFileAtomic(file: string, produce: () => Promise<string | Buffer>): Promise<void> {
  return writers.run(file, async () => {
    const tmp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await fs.writeFile(tmp, await produce());
      await fs.rename(tmp, file);
    } catch (e) {
      await fs.rm(tmp, { force: true });
      throw e;
    }
  });
}
