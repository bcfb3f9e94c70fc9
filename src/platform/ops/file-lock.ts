import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** The addon's own function: throws EAGAIN when another holds the lock. */
type TryLockBinding = (fd: number, offset: number, length: number, exclusive: boolean) => void;

/**
 * The addon fs-native-extensions ships for this platform, opened directly: the package's loader (require-addon)
 * searches ~13 ms for it on every start. Elsewhere (a platform without a prebuild) the package loads it its way.
 */
function loadTryLock(): (fd: number) => boolean {
  const require = createRequire(import.meta.url);
  const prebuild = path.join(
    path.dirname(require.resolve("fs-native-extensions")),
    "prebuilds",
    `${process.platform}-${process.arch}`,
    "fs-native-extensions.node",
  );
  if (!fs.existsSync(prebuild)) {
    const { tryLock } = require("fs-native-extensions") as typeof import("fs-native-extensions");
    return (fd) => tryLock(fd);
  }
  const addon = { exports: {} as { tryLock: TryLockBinding } };
  process.dlopen(addon, prebuild);
  return (fd) => {
    try {
      addon.exports.tryLock(fd, 0, 0, true);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EAGAIN") return false;
      throw e;
    }
  };
}

let tryLock: ((fd: number) => boolean) | undefined;

/** An exclusive lock on the whole open file, without waiting: false when another holds it. */
export function tryLockFile(fd: number): boolean {
  tryLock ??= loadTryLock(); // once per process: an addon is opened once
  return tryLock(fd);
}
