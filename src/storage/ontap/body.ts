import type { NextFunction, Request, Response } from "express";
import { InvalidInputError } from "../../platform/core/errors.js";
import { checkJsonValue, isForbiddenKey, JSON_LIMITS, UnsafeJsonError } from "../../platform/http/safe-json.js";
import { CODES } from "../core/codes.js";

/** Runs after express.json on the /api router: no prototype keys, bounded nesting, ONTAP-worded 400s. */
export function checkBody(req: Request, _res: Response, next: NextFunction): void {
  try {
    checkJsonValue(req.body);
    next();
  } catch (err) {
    if (!(err instanceof UnsafeJsonError)) return next(err);
    next(err.key ? unexpected(err.key) : new InvalidInputError(`The request body is nested deeper than ${JSON_LIMITS.maxDepth} levels.`, { code: CODES.invalidValue }));
  }
}

/**
 * ONTAP accepts nested JSON and flat dotted keys (Ansible sends `{"svm.name": "x", "users.name": ["a"]}`).
 * Expands dotted keys into the nested form; a dotted key whose value is an array under an array-of-objects
 * field (users.name: [..]) becomes one object per element.
 */
export function expandDottedKeys(body: unknown, arrayFields: readonly string[] = []): Record<string, unknown> {
  if (body === undefined || body === null || body === "") return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    throw new InvalidInputError("The request body must be a JSON object", { code: CODES.invalidValue });
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const parts = key.split(".");
    if (parts.some((p) => p === "" || isForbiddenKey(p))) throw unexpected(key);
    if (parts.length > 1 && arrayFields.includes(parts[0]) && Array.isArray(value)) {
      const list = ((out[parts[0]] as Record<string, unknown>[] | undefined) ??= []);
      value.forEach((v, i) => setPath((list[i] ??= {}), parts.slice(1), v, key));
      continue;
    }
    setPath(out, parts, value, key);
  }
  return out;
}

function setPath(target: Record<string, unknown>, parts: string[], value: unknown, key: string): void {
  let node = target;
  for (const p of parts.slice(0, -1)) {
    const next = node[p];
    if (next === undefined) node = node[p] = {} as Record<string, unknown>;
    else if (next && typeof next === "object" && !Array.isArray(next)) node = next as Record<string, unknown>;
    else throw new InvalidInputError(`Field "${key}" conflicts with another field`, { code: CODES.invalidValue, target: key });
  }
  const last = parts.at(-1)!;
  const existing = node[last];
  if (existing && typeof existing === "object" && value && typeof value === "object" && !Array.isArray(value)) {
    Object.assign(existing, value);
  } else node[last] = value;
}

export const unexpected = (name: string) =>
  new InvalidInputError(`Unexpected argument "${name}".`, { code: CODES.unexpectedArgument, target: name });

/** Rejects any key (recursively, by dotted path) that the shape does not list. `true` = leaf, object = nested. */
export type Shape = { [key: string]: true | Shape | [Shape] };

export function rejectUnknown(value: Record<string, unknown>, shape: Shape, prefix = ""): void {
  for (const [k, v] of Object.entries(value)) {
    const name = prefix + k;
    const s = Object.hasOwn(shape, k) ? shape[k] : undefined;
    if (!s) throw unexpected(name);
    if (s === true) continue;
    if (Array.isArray(s)) {
      if (!Array.isArray(v)) throw invalid(name, "an array");
      for (const item of v) {
        if (!item || typeof item !== "object" || Array.isArray(item)) throw invalid(name, "an array of objects");
        rejectUnknown(item as Record<string, unknown>, s[0], `${name}.`);
      }
      continue;
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) throw invalid(name, "an object");
    rejectUnknown(v as Record<string, unknown>, s, `${name}.`);
  }
}

export const invalid = (name: string, expected: string) =>
  new InvalidInputError(`Invalid value for field "${name}": expected ${expected}.`, { code: CODES.invalidValue, target: name });

