/**
 * Control characters (C0 and DEL) never belong in a name: SQLite's text functions stop at NUL (two names both
 * listed as their prefix) and PostgreSQL refuses NUL outright. Names are checked by the operation that stores
 * them; the database client refuses NUL in any query as the last line (src/platform/db/client.ts).
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** True when a query argument (any nesting of objects and arrays) holds a string with NUL. */
export function containsNul(v: unknown, depth = 0): boolean {
  if (typeof v === "string") return v.includes("\u0000");
  if (!v || typeof v !== "object" || depth > 32 || v instanceof Date || ArrayBuffer.isView(v)) return false;
  if (Array.isArray(v)) return v.some((x) => containsNul(x, depth + 1));
  for (const k in v) if (containsNul((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}
