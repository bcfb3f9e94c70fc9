import type { z } from "zod";
import { DomainError, InvalidInputError } from "../../platform/core/errors.js";
import { CODES } from "./codes.js";

/**
 * The storage operations' input contract. Each operation declares its input once as a zod schema in domain terms
 * (next to it, in `schema.ts`) and parses what an adapter hands it with `parseInput`. Errors name fields by their
 * domain path; each face renames them to its own field names (`FieldNames`) — ONTAP's `space.hard_limit`,
 * GraphQL's `limits.spaceHardLimitBytes` — with the same wording and ONTAP code everywhere.
 */
export type FieldPath = readonly (string | number)[];

/** What is wrong with a field; worded per face from its field names. */
export type Problem =
  | { kind: "invalid"; expected: string }
  | { kind: "missing"; or?: FieldPath }
  | { kind: "onlyFor"; ruleType: string }
  | { kind: "exclusive"; of: [FieldPath, FieldPath] }
  /** A rule whose wording names no field. */
  | { kind: "refused"; message: string; code: string };

export type FieldNames = (path: FieldPath) => string;

/** Domain names: dotted, array positions in brackets (`users[1]`, `users.name` for a field of any element). */
export function fieldNames(rename: Record<string, string> = {}): FieldNames {
  const nameOf: FieldNames = (path) => {
    const last = path.at(-1);
    if (typeof last === "number") return `${nameOf(path.slice(0, -1))}[${last}]`;
    const key = path.filter((p) => typeof p === "string").join(".");
    return rename[key] ?? key;
  };
  return nameOf;
}
const domainNames = fieldNames();

function wording(problem: Problem, path: FieldPath, nameOf: FieldNames): { message: string; code: string } {
  const name = nameOf(path);
  switch (problem.kind) {
    case "invalid":
      return { message: `Invalid value for field "${name}": expected ${problem.expected}.`, code: CODES.invalidValue };
    case "missing": {
      const alternative = problem.or ? ` or "${nameOf(problem.or)}"` : "";
      return { message: `Missing required field "${name}"${alternative}.`, code: CODES.missingField };
    }
    case "onlyFor":
      return { message: `"${name}" is only valid for ${problem.ruleType} rules.`, code: CODES.badCombination };
    case "exclusive":
      return { message: `Specify either ${nameOf(problem.of[0])} or ${nameOf(problem.of[1])}, not both.`, code: CODES.badCombination };
    case "refused":
      return { message: problem.message, code: problem.code };
  }
}

/** Bad input at a field of an operation's input. */
export class FieldError extends InvalidInputError {
  constructor(
    readonly path: FieldPath,
    readonly problem: Problem,
    nameOf: FieldNames = domainNames,
  ) {
    const { message, code } = wording(problem, path, nameOf);
    super(message, { code, target: nameOf(path) });
  }
}

const FIELD = Symbol("storage field");

/** Marks a not-found or conflict error as being about a field of the input, so faces rename its target. */
export function aboutField<E extends DomainError>(err: E, path: FieldPath): E {
  return Object.assign(err, { [FIELD]: path, detail: { ...err.detail, target: domainNames(path) } });
}

/** The error in a face's field names (other errors pass unchanged). */
export function inFaceTerms(err: unknown, nameOf: FieldNames): unknown {
  if (err instanceof FieldError) return new FieldError(err.path, err.problem, nameOf);
  const path = err instanceof DomainError ? (err as DomainError & { [FIELD]?: FieldPath })[FIELD] : undefined;
  if (!path) return err;
  const renamed = Object.create(Object.getPrototypeOf(err), Object.getOwnPropertyDescriptors(err));
  return Object.assign(renamed, { detail: { ...(err as DomainError).detail, target: nameOf(path) } });
}

/** Runs an operation call, renaming the fields its errors name to the face's. */
export async function inTermsOf<T>(nameOf: FieldNames, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw inFaceTerms(err, nameOf);
  }
}

/**
 * Parses an operation's input with its schema. The first issue becomes a FieldError: a custom issue carries its
 * Problem in `params`, a missing value is "missing", a wrong type "invalid" with the schema's message as the
 * expected form, and an unknown key (only reachable from internal callers: adapters map known fields) "invalid".
 */
export function parseInput<S extends z.ZodType>(schema: S, input: z.input<S>): z.output<S> {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
  if (issue.code === "custom" && issue.params?.problem) throw new FieldError(path, issue.params.problem as Problem);
  if (issue.code === "unrecognized_keys") throw new FieldError([...path, issue.keys[0]], { kind: "invalid", expected: "no such field" });
  if (issue.code === "invalid_type" && issue.input === undefined) throw new FieldError(path, { kind: "missing" });
  throw new FieldError(path, { kind: "invalid", expected: issue.message });
}

/** A custom zod issue carrying its Problem (for `ctx.issues.push` in transforms and refinements). */
export const problemIssue = (input: unknown, problem: Problem, path: (string | number)[] = []) =>
  ({ code: "custom", input, path, message: problem.kind, params: { problem } }) as const;

/** A rule an input breaks: where, and what is wrong. */
export type Broken = { path: (string | number)[]; problem: Problem } | undefined;

/** A zod refinement from a rule check (`schema.superRefine(rule((v) => …))`), reporting the first broken rule. */
export const rule =
  <T>(check: (value: T) => Broken) =>
  (value: T, ctx: z.RefinementCtx<T>) => {
    const broken = check(value);
    if (broken) ctx.addIssue(problemIssue(value, broken.problem, broken.path));
  };

/** A rule whose wording names no field (e.g. `Invalid qtree name "x".`), ONTAP's invalid-value code by default. */
export const refused = (path: (string | number)[], message: string, code: string = CODES.invalidValue): Broken => ({ path, problem: { kind: "refused", message, code } });
