/**
 * The one way client JSON enters Patchbay (REST bodies of both faces, uploaded topology files, GraphQL JSON
 * scalars): parsed, then checked without recursion, so that
 * - no key can ever reach an object prototype (`__proto__`, `constructor`, `prototype` are refused wherever they
 *   appear: later code copies, merges and walks these objects by key), and
 * - nesting is bounded (deep values overflow the stack of every recursive consumer: validators, serializers).
 */
export const JSON_LIMITS = {
  /** Maximum nesting of objects and arrays in a JSON document. */
  maxDepth: 64,
} as const;

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** A key that could reach an object prototype when used as a property name. */
export const isForbiddenKey = (key: string): boolean => FORBIDDEN_KEYS.has(key);

export class UnsafeJsonError extends Error {
  constructor(
    message: string,
    /** The offending key (forbidden keys only). */
    readonly key?: string,
  ) {
    super(message);
    this.name = "UnsafeJsonError";
  }
}

/** Throws UnsafeJsonError when the value nests deeper than `maxDepth` or holds a forbidden key. */
export function checkJsonValue(value: unknown, maxDepth: number = JSON_LIMITS.maxDepth): void {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (!v || typeof v !== "object") continue;
    if (depth >= maxDepth) throw new UnsafeJsonError(`JSON nested deeper than ${maxDepth} levels`);
    if (Array.isArray(v)) {
      for (const item of v) stack.push({ v: item, depth: depth + 1 });
      continue;
    }
    for (const key of Object.keys(v)) {
      if (isForbiddenKey(key)) throw new UnsafeJsonError(`Forbidden key "${key}" in JSON`, key);
      stack.push({ v: (v as Record<string, unknown>)[key], depth: depth + 1 });
    }
  }
}

/** JSON.parse plus checkJsonValue. Syntax errors stay SyntaxErrors. */
export function parseJson(text: string, maxDepth: number = JSON_LIMITS.maxDepth): unknown {
  const value: unknown = JSON.parse(text);
  checkJsonValue(value, maxDepth);
  return value;
}
