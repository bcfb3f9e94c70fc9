import { ForbiddenError, InvalidInputError } from "../../platform/core/errors.js";
import { CONTROL_CHARACTERS } from "../../platform/core/text.js";

/**
 * Names are names, never paths. Every name a client gives (projects, snapshots, nodes, computes) is checked here
 * by the operation that stores it, so REST, GraphQL, import, load and duplicate apply one rule on both databases:
 * - no control characters (SQLite's text functions stop at NUL, PostgreSQL refuses it): 400;
 * - a name that also names a file (`<project>.gns3`, `<snapshot>.gns3snapshot`) holds no path separator — 403, as
 *   GNS3's compute answers for project names — and fits a file name once its suffix is added.
 */

/** A file name is at most 255 bytes; this leaves room for the longest suffix we add (".gns3snapshot", ".tmp…"). */
export const MAX_FILE_NAME_BYTES = 200;

export function assertName(kind: string, name: string): void {
  if (CONTROL_CHARACTERS.test(name)) throw new InvalidInputError(`${kind} name must not contain control characters`);
}

/** For names that become file names: also no separators, and a bounded length. */
export function assertFileName(kind: string, name: string): void {
  assertName(kind, name);
  if (Buffer.byteLength(name) > MAX_FILE_NAME_BYTES) {
    throw new InvalidInputError(`${kind} name is longer than ${MAX_FILE_NAME_BYTES} bytes`);
  }
  if (name.includes("/") || name.includes("\\")) throw new ForbiddenError(`${kind} name ${name} must not contain / or \\`);
}
