import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { tryLockFile } from "./file-lock.js";
import { StartupError } from "./startup-errors.js";

/**
 * One instance per data directory. Its start-up recovery kills every process an earlier run of the directory left
 * and marks their nodes stopped, so a second instance on a directory in use would kill the first one's nodes.
 *
 * The lock is an open file description lock (fcntl F_OFD_SETLK) on <data dir>/patchbay.lock: the kernel drops it
 * when the file is closed or its process dies, kill -9 included, so no stale lock is ever guessed at, and two servers
 * in one process (tests) conflict as two processes do. The file is never removed: an unlink racing another start's
 * open would let two instances lock two different files. Its content only names the holder in the refusal.
 */
export const LOCK_FILE = "patchbay.lock";

export interface DataDirLock {
  /** Idempotent; also done by the kernel when the process ends. */
  release(): void;
}

export function lockDataDir(dir: string): DataDirLock {
  const file = path.join(dir, LOCK_FILE);
  let fd: number | undefined;
  let locked = false;
  try {
    // Read-write without truncating: the holder's line stays readable until the lock is ours.
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    locked = tryLockFile(fd);
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new StartupError(`cannot lock data directory ${dir} (${code}): choose a directory on a local file system with PATCHBAY_DATA_DIR or --data-dir`);
  }
  if (!locked) {
    const holder = fs.readFileSync(fd, "utf8").trim() || "a process that is starting";
    fs.closeSync(fd);
    throw new StartupError(`data directory ${dir} is in use by another Patchbay (${holder}): stop that one, or give this one its own PATCHBAY_DATA_DIR or --data-dir`);
  }
  fs.ftruncateSync(fd);
  fs.writeSync(fd, `pid ${process.pid} on ${os.hostname()}\n`, 0);
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      fs.ftruncateSync(fd); // a holder's line is never read once it is gone
      fs.closeSync(fd);
    },
  };
}
