import { ConflictError } from "../../platform/core/errors.js";

const MAX_NUMBER = 1_000_000;

/**
 * GNS3's node naming rule: spaces are removed; a free name is kept; a `{0}`/`{id}` template takes the first free
 * integer >= 1; otherwise trailing digits are replaced by (or a number is appended as) the first free integer.
 */
export function allocateNodeName(requested: string, taken: Set<string>): string {
  const base = requested.replaceAll(" ", "");
  if (base.includes("{0}") || base.includes("{id}")) {
    const bad = /\{(?!0\}|id\}|name\})[^}]*\}/.exec(base);
    if (bad) throw new ConflictError(`${bad[0]} is not a valid replacement string in the node name`);
    for (let n = 1; n < MAX_NUMBER; n++) {
      const name = base.replaceAll("{0}", String(n)).replaceAll("{id}", String(n)).replaceAll("{name}", "Node");
      if (!taken.has(name)) return name;
    }
  } else {
    if (!taken.has(base)) return base;
    const stem = base.replace(/\d+$/, "");
    for (let n = 1; n < MAX_NUMBER; n++) if (!taken.has(stem + n)) return stem + n;
  }
  throw new ConflictError("A node name could not be allocated (node limit reached?)");
}
