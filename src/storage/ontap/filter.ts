import { InvalidInputError } from "../../platform/errors.js";
import { CODES } from "./codes.js";
import { invalid } from "./body.js";

/**
 * The ONTAP query language translated into a Prisma `where`, so filtering runs in the database:
 * `field=value` with `|` (and, as Ansible sends it, `,`) for alternatives, `<`, `>`, `<=`, `>=`, `!` (not),
 * `*` wildcards and `null` / `!null`. Dotted fields map to relations; on array fields (users.name) a record
 * matches when any element matches.
 */
export type ScalarType = "string" | "bigint" | "int" | "boolean";

export interface FilterField {
  type: ScalarType;
  /** Column name on the innermost model. */
  column: string;
  /** Relations to walk from the root model (e.g. ["volume", "svm"]). */
  path?: string[];
  /** An array relation (one-to-many): matches when some element matches. */
  many?: string;
  /** When the value set is not a column (e.g. qtree.id), translate the condition yourself. */
  custom?: (terms: Term[]) => Promise<object> | object;
}

export type Term =
  | { op: "null" | "notNull" }
  | { op: "eq" | "not" | "lt" | "gt" | "lte" | "gte"; value: string }
  | { op: "like" | "notLike"; parts: string[] };

export function parseTerms(raw: string): Term[] {
  return raw.split(/[|,]/).map((t): Term => {
    if (t === "null") return { op: "null" };
    if (t === "!null") return { op: "notNull" };
    const m = /^(<=|>=|<|>|!)?(.*)$/s.exec(t)!;
    const sign = m[1];
    const rest = m[2];
    if (rest.includes("*") && (!sign || sign === "!")) return { op: sign ? "notLike" : "like", parts: rest.split("*") };
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
    case "bigint":
    case "int":
      if (!/^-?\d{1,19}$/.test(v)) throw invalid(name, "an integer");
      return type === "int" ? Number(v) : BigInt(v);
  }
}

/** Wildcards: `a*` startsWith, `*a` endsWith, `*a*` contains; several stars AND those pieces together. */
function likeCondition(parts: string[]): object[] {
  const conds: object[] = [];
  const [first, ...more] = parts;
  const last = more.pop();
  if (first) conds.push({ startsWith: first });
  if (last) conds.push({ endsWith: last });
  for (const mid of more) if (mid) conds.push({ contains: mid });
  return conds.length ? conds : [{ not: null }];
}

function termCondition(name: string, f: FilterField, term: Term): object {
  const col = f.column;
  switch (term.op) {
    case "null":
      return { [col]: null };
    case "notNull":
      return { [col]: { not: null } };
    case "like":
      if (f.type !== "string") throw invalid(name, "a value without wildcards");
      return { AND: likeCondition(term.parts).map((c) => ({ [col]: c })) };
    case "notLike":
      if (f.type !== "string") throw invalid(name, "a value without wildcards");
      return { NOT: { AND: likeCondition(term.parts).map((c) => ({ [col]: c })) }, [col]: { not: null } };
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
    const onlyNull = terms.every((t) => t.op === "null");
    where = onlyNull ? { [f.many]: { none: { [f.column]: { not: null } } } } : { [f.many]: { some: cond } };
  }
  for (const rel of [...(f.path ?? [])].reverse()) where = { [rel]: where };
  return where;
}

/** Terms → a condition on the field's own model (no relation wrapping). */
export function columnCondition(name: string, f: FilterField, terms: Term[]): object {
  const conds = terms.map((t) => termCondition(name, f, t));
  return conds.length === 1 ? conds[0] : { OR: conds };
}

/** Alternatives (ORed terms) on one field → a Prisma condition on the root model. */
export async function termsCondition(name: string, f: FilterField, terms: Term[]): Promise<object> {
  if (f.custom) return f.custom(terms);
  return wrap(f, columnCondition(name, f, terms), terms);
}

/** One filter parameter → a Prisma condition on the root model. */
export const fieldCondition = (name: string, f: FilterField, raw: string) => termsCondition(name, f, parseTerms(raw));

export async function buildWhere(filters: Record<string, string>, fields: Record<string, FilterField>): Promise<object> {
  const and: object[] = [];
  for (const [name, raw] of Object.entries(filters)) {
    const f = fields[name];
    if (!f) throw new InvalidInputError(`Unexpected argument "${name}".`, { code: CODES.unexpectedArgument, target: name });
    and.push(await fieldCondition(name, f, raw));
  }
  return and.length ? { AND: and } : {};
}
