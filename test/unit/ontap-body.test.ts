import { describe, expect, it } from "vitest";
import { expandDottedKeys } from "../../src/storage/ontap/body.js";
import { isInt64, parseDecimalInteger } from "../../src/platform/int64.js";
import { checkJsonValue, JSON_LIMITS, parseJson, UnsafeJsonError } from "../../src/platform/http/safe-json.js";

/** Body parsing without a server: client JSON checks and ONTAP's flat dotted keys. */
describe("unit: safe JSON", () => {
  it("parses ordinary JSON and keeps syntax errors as SyntaxError", () => {
    expect(parseJson('{"a": [1, {"b": null}]}')).toEqual({ a: [1, { b: null }] });
    expect(() => parseJson("{")).toThrow(SyntaxError);
  });

  it("refuses prototype keys wherever they appear", () => {
    for (const key of ["__proto__", "constructor", "prototype"]) {
      const err = (() => {
        try {
          parseJson(`{"a": [{"${key}": {}}]}`);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(UnsafeJsonError);
      expect((err as UnsafeJsonError).key).toBe(key);
    }
  });

  it("bounds nesting without recursing (a deep document does not overflow the stack)", () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    expect(() => parseJson(nested(JSON_LIMITS.maxDepth))).not.toThrow();
    expect(() => parseJson(nested(JSON_LIMITS.maxDepth + 1))).toThrow(/nested deeper than 64/);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(() => checkJsonValue(deep)).toThrow(UnsafeJsonError);
  });
});

describe("unit: ONTAP dotted keys", () => {
  it("expands dotted keys into nested objects and merges them with nested ones", () => {
    expect(expandDottedKeys({ "svm.name": "vs0", svm: { uuid: "u" }, "space.hard_limit": 5 })).toEqual({
      svm: { name: "vs0", uuid: "u" },
      space: { hard_limit: 5 },
    });
  });

  it("turns an array under an array-of-objects field into one object per element (Ansible's users.name)", () => {
    expect(expandDottedKeys({ "users.name": ["a", "b"], "users.id": ["1"] }, ["users"])).toEqual({
      users: [{ name: "a", id: "1" }, { name: "b" }],
    });
    expect(expandDottedKeys({ "users.name": ["a"] })).toEqual({ users: { name: ["a"] } });
  });

  it("an empty body is an empty object; a non-object body, an empty segment or a prototype key is refused", () => {
    expect(expandDottedKeys(undefined)).toEqual({});
    expect(expandDottedKeys("")).toEqual({});
    expect(() => expandDottedKeys([1])).toThrow("The request body must be a JSON object");
    expect(() => expandDottedKeys({ "a..b": 1 })).toThrow('Unexpected argument "a..b".');
    expect(() => expandDottedKeys({ "svm.__proto__.x": 1 })).toThrow('Unexpected argument "svm.__proto__.x".');
    expect(() => expandDottedKeys({ svm: "x", "svm.name": "y" })).toThrow('Field "svm.name" conflicts with another field');
  });
});

describe("unit: ONTAP scalar fields", () => {
  it("integers from decimal strings, checked against what both databases store", () => {
    expect(parseDecimalInteger("-9223372036854775808")).toBe(-(2n ** 63n));
    expect(parseDecimalInteger("-0009")).toBe(-9n);
    expect(isInt64(parseDecimalInteger("9223372036854775808")!)).toBe(false);
    expect(isInt64(parseDecimalInteger("0".repeat(30) + "1")!)).toBe(true);
    expect(isInt64(parseDecimalInteger("-" + "9".repeat(100_000))!)).toBe(false);
    expect(parseDecimalInteger("1.5")).toBeUndefined();
  });
});
