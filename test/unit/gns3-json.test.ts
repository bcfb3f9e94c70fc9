import { describe, expect, it } from "vitest";
import { gns3Body, pythonJsonLine, pythonRepr, sortKeys } from "../../src/emulation/rest/json.js";

/** GNS3's JSON serialisations (Python's json.dumps and repr), without a server. */
describe("unit: GNS3 serializers", () => {
  it("sorts keys at every depth, inside arrays too, and leaves non-plain objects alone", () => {
    const date = new Date(0);
    expect(JSON.stringify(sortKeys({ b: 1, a: [{ d: 1, c: 2 }], c: { z: 1, y: date } }))).toBe(
      JSON.stringify({ a: [{ c: 2, d: 1 }], b: 1, c: { y: date, z: 1 } }),
    );
  });

  it("REST bodies: sorted keys, 4-space indentation (json.dumps(indent=4, sort_keys=True))", () => {
    expect(gns3Body({ name: "PC1", console: 5000, ports: [] })).toBe('{\n    "console": 5000,\n    "name": "PC1",\n    "ports": []\n}');
  });

  it("notification lines: Python's separators ', ' and ': ', sorted keys, undefined as null", () => {
    expect(pythonJsonLine({ event: { b: [1, "x"], a: null, c: undefined }, action: "node.updated" })).toBe(
      '{"action": "node.updated", "event": {"a": null, "b": [1, "x"], "c": null}}',
    );
    expect(pythonJsonLine({ s: 'quote " and é' })).toBe('{"s": "quote \\" and é"}');
  });

  it("Python repr for schema error messages", () => {
    expect(pythonRepr({ name: "it's", n: 1.5, ok: true, no: false, none: null, list: ["a\\b"] })).toBe(
      "{'name': 'it\\'s', 'n': 1.5, 'ok': True, 'no': False, 'none': None, 'list': ['a\\\\b']}",
    );
    expect(pythonRepr(undefined)).toBe("None");
  });
});
