import { InvalidInputError } from "../../platform/core/errors.js";
import { CODES } from "../core/codes.js";
import { invalid, unexpected } from "./body.js";
import type { FilterField } from "./filter.js";

/** The query string of a collection GET, split into control parameters and filters. */
export interface CollectionQuery {
  fields?: string;
  maxRecords?: number;
  returnRecords: boolean;
  returnTimeout: number;
  orderBy: { field: string; dir: "asc" | "desc" }[];
  /** Keyset cursor for the next page (opaque to clients: it only appears in `_links.next`). */
  startAfter?: string;
  filters: Record<string, string>;
}

const CONTROL = new Set(["fields", "max_records", "return_records", "return_timeout", "order_by", "start.uuid", "start.offset"]);

export function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    // Repeated `fields` parameters concatenate; anything else must be given once.
    if (name === "fields") return v.join(",");
    throw new InvalidInputError(`Parameter "${name}" was given more than once.`, { code: CODES.invalidValue, target: name });
  }
  return String(v);
}

export function parseBool(name: string, v: string | undefined, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (v === "true" || v === "false") return v === "true";
  throw invalid(name, "true or false");
}

/** How long a request may wait for its job: whole seconds from 0 to 120 (ONTAP's maximum). */
export function checkTimeout(seconds: number, name = "return_timeout"): number {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 120) throw invalid(name, "an integer from 0 to 120");
  return seconds;
}

export function parseTimeout(v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v)) throw invalid("return_timeout", "an integer from 0 to 120");
  return checkTimeout(Number(v));
}

/** At most one sort key per sortable field: a bound on the statement a client can ask for. */
export function checkOrderLength(keys: number, sortable: Set<string>, name = "order_by"): void {
  if (keys > sortable.size) throw invalid(name, `at most ${sortable.size} fields`);
}

export function parseCollectionQuery(
  query: Record<string, unknown>,
  filterable: Record<string, FilterField>,
  sortable: Set<string>,
): CollectionQuery {
  const filters: Record<string, string> = {};
  for (const name of Object.keys(query)) {
    if (CONTROL.has(name)) continue;
    if (!Object.hasOwn(filterable, name)) throw unexpected(name);
    filters[name] = single(query, name)!;
  }
  const max = single(query, "max_records");
  if (max !== undefined && (!/^\d+$/.test(max) || Number(max) < 1 || Number(max) > 10_000)) {
    throw invalid("max_records", "an integer from 1 to 10000");
  }
  const orderKeys = (single(query, "order_by") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  checkOrderLength(orderKeys.length, sortable);
  const orderBy = orderKeys.map((s) => {
      const [field, dir = "asc", extra] = s.split(/\s+/);
      if (extra !== undefined || (dir !== "asc" && dir !== "desc")) throw invalid("order_by", "<field> [asc|desc]");
      if (!sortable.has(field)) throw invalid("order_by", `one of ${[...sortable].join(", ")}`);
      return { field, dir: dir as "asc" | "desc" };
  });
  const offset = single(query, "start.offset");
  if (offset !== undefined && !/^\d{1,9}$/.test(offset)) throw invalid("start.offset", "an integer below 1000000000");
  return {
    fields: single(query, "fields"),
    maxRecords: max === undefined ? undefined : Number(max),
    returnRecords: parseBool("return_records", single(query, "return_records"), true),
    returnTimeout: parseTimeout(single(query, "return_timeout"), 15),
    orderBy,
    startAfter: single(query, "start.uuid") ?? offset,
    filters,
  };
}

/** Write requests accept only return_timeout and return_records. */
export function parseWriteQuery(query: Record<string, unknown>, allowRecords: boolean) {
  for (const name of Object.keys(query)) {
    if (name !== "return_timeout" && !(allowRecords && name === "return_records")) throw unexpected(name);
  }
  return {
    returnTimeout: parseTimeout(single(query, "return_timeout"), 0),
    returnRecords: parseBool("return_records", single(query, "return_records"), false),
  };
}
