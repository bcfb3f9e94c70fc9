import { isForbiddenKey } from "../../platform/http/safe-json.js";
import { invalid, unexpected } from "./body.js";

/**
 * `fields=` handling: a comma list of dotted paths (empty entries ignored: Ansible sends a trailing comma),
 * `*` / `**` for everything, a parent name for the whole sub-object. Records are built in full and then
 * projected; the key (`uuid` or the resource's key fields) and `_links` are always kept.
 */
export type FieldSelection = { all: true } | { all: false; paths: string[] };

/** More names than any record has fields is a mistake (and repeated names would multiply the projection work). */
export const MAX_FIELDS = 100;

export function parseFields(raw: string | undefined, defaults: string[], echoed: string[] = []): FieldSelection {
  const named = (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (named.length > MAX_FIELDS) throw invalid("fields", `at most ${MAX_FIELDS} field names`);
  for (const name of named) if (name.split(".").some(isForbiddenKey)) throw unexpected(name);
  if (named.includes("*") || named.includes("**")) return { all: true };
  return { all: false, paths: [...(named.length ? named : defaults), ...echoed] };
}

/** Every dotted path a record has, for validating `fields=` entries. */
export function knownPaths(record: object, prefix = ""): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(record)) {
    const p = prefix + k;
    out.push(p);
    if (v && typeof v === "object" && !Array.isArray(v)) out.push(...knownPaths(v, `${p}.`));
    if (Array.isArray(v) && v[0] && typeof v[0] === "object") for (const item of v) out.push(...knownPaths(item, `${p}.`));
  }
  return out;
}

export function project(record: Record<string, unknown>, sel: FieldSelection, keys: string[]): Record<string, unknown> {
  if (sel.all) return record;
  const out: Record<string, unknown> = {};
  for (const path of [...keys, ...sel.paths, "_links"]) copyPath(record, out, path.split("."));
  return out;
}

function copyPath(from: unknown, to: Record<string, unknown>, parts: string[]): void {
  if (!from || typeof from !== "object") return;
  const [head, ...rest] = parts;
  const value = Object.hasOwn(from, head) ? (from as Record<string, unknown>)[head] : undefined;
  if (value === undefined) return;
  if (!rest.length) {
    to[head] = value;
    return;
  }
  if (Array.isArray(value)) {
    const list = (Array.isArray(to[head]) ? to[head] : (to[head] = value.map(() => ({})))) as Record<string, unknown>[];
    value.forEach((item, i) => copyPath(item, list[i], rest));
    return;
  }
  const child = (to[head] && typeof to[head] === "object" ? to[head] : (to[head] = {})) as Record<string, unknown>;
  copyPath(value, child, rest);
  // Links travel with their parent object (svm._links etc.).
  const links = (value as Record<string, unknown>)._links;
  if (links && rest[0] !== "_links") child._links = links;
}
