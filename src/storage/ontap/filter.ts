import { InvalidInputError } from "../../platform/core/errors.js";
import { CODES } from "../core/codes.js";
import { INT64_RANGE, isInt64, parseDecimalInteger } from "../../platform/int64.js";
import { invalid } from "./body.js";

/**
 * The ONTAP query language translated into a Prisma `where`, so filtering runs in the database:
 * `field=value` with `|` (and, as Ansible sends it, `,`) for alternatives, `<`, `>`, `<=`, `>=`, `!` (not),
 * `*` wildcards and `null` / `!null`. Dotted fields map to relations; on array fields (users.name) a record
 * matches when any element matches.
 */
export type ScalarType = "string" | "bigint" | "int" | "boolean";

/** Bounds that keep one filter's cost small (every term becomes SQL; SQLite refuses complex LIKE patterns). */
export const FILTER_LIMITS = {
  /** Alternatives (`|` or `,`) in one filter parameter. */
  maxAlternatives: 100,
  /** Characters in one alternative. */
  maxTermLength: 512,
  /** `*` wildcards in one alternative. */
  maxWildcards: 8,
} as const;

export interface FilterField {
  type: ScalarType;
  /** Column name on the innermost model. */
  column: string;
  /** Relations to walk from the root model (e.g. ["volume", "svm"]). */
  path?: string[];
  /** An array relation (one-to-many): matches when some element matches. */
  many?: string;
  /** The column may hold NULL (`null`, `!null` and `*` mean something); otherwise `null` matches nothing. */
  nullable?: boolean;
  /** When the value set is not a column (e.g. qtree.id), translate the condition yourself. */
  custom?: (terms: Term[]) => Promise<object> | object;
}

export type Term =
  | { op: "null" | "notNull" }
  | { op: "eq" | "not" | "lt" | "gt" | "lte" | "gte"; value: string }
  | { op: "like" | "notLike"; parts: string[] };

export function parseTerms(raw: string, name = "filter"): Term[] {
  const alternatives = raw.split(/[|,]/);
  if (alternatives.length > FILTER_LIMITS.maxAlternatives) throw invalid(name, `at most ${FILTER_LIMITS.maxAlternatives} alternatives`);
  return alternatives.map((t): Term => {
    if (t.length > FILTER_LIMITS.maxTermLength) throw invalid(name, `values of at most ${FILTER_LIMITS.maxTermLength} characters`);
    if (t === "null") return { op: "null" };
    if (t === "!null") return { op: "notNull" };
    const m = /^(<=|>=|<|>|!)?(.*)$/s.exec(t)!;
    const sign = m[1];
    const rest = m[2];
    if (rest.includes("*") && (!sign || sign === "!")) {
      const parts = rest.split("*");
      if (parts.length - 1 > FILTER_LIMITS.maxWildcards) throw invalid(name, `a pattern with at most ${FILTER_LIMITS.maxWildcards} wildcards`);
      return { op: sign ? "notLike" : "like", parts };
    }
    const op = ({ "<=": "lte", ">=": "gte", "<": "lt", ">": "gt", "!": "not" } as const)[sign ?? ""] ?? "eq";
    return { op, value: rest };
  });
}

function convert(name: string, type: ScalarType, v: string): unknown {
  switch (type) {
    case "string":
      return v;
    case "boolean":
      if (v === "true" || v === "false") return v === "true";
      throw invalid(name, "true or false");
    case "bigint": {
      const n = parseDecimalInteger(v);
      if (n === undefined || !isInt64(n)) throw invalid(name, INT64_RANGE);
      return n;
    }
    case "int":
      if (!/^-?\d{1,10}$/.test(v) || Math.abs(Number(v)) > 2 ** 31 - 1) throw invalid(name, "a 32-bit integer");
      return Number(v);
  }
}

/** Conditions that match every record and none (a required column has no NULL to compare with). */
const MATCH_ALL = {};
const matchNone = (col: string) => ({ [col]: { in: [] } });

/**
 * Wildcards: `a*` startsWith, `*a` endsWith, `*a*` contains; several stars AND those pieces together. A bare `*`
 * matches any value that is set: nothing to compare on a required column.
 */
function likeCondition(parts: string[], nullable?: boolean): object[] {
  const conds: object[] = [];
  const [first, ...more] = parts;
  const last = more.pop();
  if (first) conds.push({ startsWith: first });
  if (last) conds.push({ endsWith: last });
  for (const mid of more) if (mid) conds.push({ contains: mid });
  return conds.length || !nullable ? conds : [{ not: null }];
}

function termCondition(name: string, f: FilterField, term: Term): object {
  const col = f.column;
  switch (term.op) {
    case "null":
      return f.nullable ? { [col]: null } : matchNone(col);
    case "notNull":
      return f.nullable ? { [col]: { not: null } } : MATCH_ALL;
    case "like":
    case "notLike": {
      if (f.type !== "string") throw invalid(name, "a value without wildcards");
      const conds = likeCondition(term.parts, f.nullable);
      if (!conds.length) return term.op === "like" ? MATCH_ALL : matchNone(col); // a bare `*` on a required column
      const like = { AND: conds.map((c) => ({ [col]: c })) };
      if (term.op === "like") return like;
      return f.nullable ? { NOT: like, [col]: { not: null } } : { NOT: like };
    }
    case "eq":
      return { [col]: convert(name, f.type, term.value) };
    case "not":
      return { [col]: { not: convert(name, f.type, term.value) } };
    default:
      if (f.type === "boolean") throw invalid(name, "true or false");
      return { [col]: { [term.op]: convert(name, f.type, term.value) } };
  }
}

function wrap(f: FilterField, cond: object, terms: Term[]): object {
  let where = cond;
  if (f.many) {
    // "field is null" on an array: no element has it set.
    const onlyNull = f.nullable && terms.every((t) => t.op === "null");
    where = onlyNull ? { [f.many]: { none: { [f.column]: { not: null } } } } : { [f.many]: { some: cond } };
  }
  for (const rel of [...(f.path ?? [])].reverse()) where = { [rel]: where };
  return where;
}

/** Terms → a condition on the field's own model (no relation wrapping). */
export function columnCondition(name: string, f: FilterField, terms: Term[]): object {
  if (terms.length > FILTER_LIMITS.maxAlternatives) throw invalid(name, `at most ${FILTER_LIMITS.maxAlternatives} alternatives`);
  const conds = terms.map((t) => termCondition(name, f, t));
  return conds.length === 1 ? conds[0] : { OR: conds };
}

/** Alternatives (ORed terms) on one field → a Prisma condition on the root model. */
export async function termsCondition(name: string, f: FilterField, terms: Term[]): Promise<object> {
  if (f.custom) return f.custom(terms);
  return wrap(f, columnCondition(name, f, terms), terms);
}

/** One filter parameter → a Prisma condition on the root model. */
export const fieldCondition = (name: string, f: FilterField, raw: string) => termsCondition(name, f, parseTerms(raw, name));

export async function buildWhere(filters: Record<string, string>, fields: Record<string, FilterField>): Promise<object> {
  const and: object[] = [];
  for (const [name, raw] of Object.entries(filters)) {
    const f = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!f) throw new InvalidInputError(`Unexpected argument "${name}".`, { code: CODES.unexpectedArgument, target: name });
    and.push(await fieldCondition(name, f, raw));
  }
  return and.length ? { AND: and } : {};
}
