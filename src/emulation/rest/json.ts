/** GNS3 serialises JSON with sorted keys and 4-space indentation; events use sorted keys on one line. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object" && value.constructor === Object) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export const gns3Body = (value: unknown) => JSON.stringify(sortKeys(value), null, 4);

/** Python's json.dumps default separators (", " and ": ") with sorted keys, as in notification messages. */
export function pythonJsonLine(value: unknown): string {
  const v = sortKeys(value);
  const enc = (x: unknown): string => {
    if (Array.isArray(x)) return `[${x.map(enc).join(", ")}]`;
    if (x && typeof x === "object") {
      return `{${Object.entries(x).map(([k, val]) => `${JSON.stringify(k)}: ${enc(val)}`).join(", ")}}`;
    }
    return JSON.stringify(x ?? null);
  };
  return enc(v);
}

/** Python repr of parsed JSON, used verbatim in GNS3's schema error messages. */
export function pythonRepr(x: unknown): string {
  if (x === null || x === undefined) return "None";
  if (x === true) return "True";
  if (x === false) return "False";
  if (typeof x === "string") return `'${x.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  if (typeof x === "number") return String(x);
  if (Array.isArray(x)) return `[${x.map(pythonRepr).join(", ")}]`;
  return `{${Object.entries(x as object).map(([k, v]) => `${pythonRepr(k)}: ${pythonRepr(v)}`).join(", ")}}`;
}
