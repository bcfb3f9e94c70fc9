import { describe, expect, it } from "vitest";
import { knownPaths, MAX_FIELDS, parseFields, project } from "../../src/storage/ontap/fields.js";

/** `fields=` selection and projection of ONTAP records, without a server. */
const RECORD = {
  uuid: "r1",
  name: "q1",
  svm: { name: "vs0", uuid: "s1", _links: { self: { href: "/api/svm/svms/s1" } } },
  users: [{ name: "a", id: "1" }, { name: "b" }],
  space: { hard_limit: 10, used: { total: 3 } },
  _links: { self: { href: "/api/storage/quota/rules/r1" } },
};

describe("unit: ONTAP field selection", () => {
  it("defaults when nothing is named; empty entries ignored (Ansible's trailing comma); * and ** select all", () => {
    expect(parseFields(undefined, ["name"])).toEqual({ all: false, paths: ["name"] });
    expect(parseFields("space.hard_limit,,", ["name"], ["svm.name"])).toEqual({ all: false, paths: ["space.hard_limit", "svm.name"] });
    expect(parseFields("name,*", ["name"])).toEqual({ all: true });
    expect(parseFields("**", [])).toEqual({ all: true });
  });

  it("refuses too many names and prototype names", () => {
    expect(() => parseFields(Array(MAX_FIELDS + 1).fill("name").join(","), [])).toThrow(/at most 100 field names/);
    expect(() => parseFields("svm.constructor", [])).toThrow('Unexpected argument "svm.constructor".');
  });

  it("lists every dotted path of a record, through objects and arrays of objects", () => {
    expect(knownPaths(RECORD)).toEqual(
      expect.arrayContaining(["uuid", "svm", "svm.name", "svm._links.self.href", "users", "users.name", "users.id", "space.used.total"]),
    );
  });

  it("projects the named paths plus the key and _links; sub-objects keep their own _links", () => {
    expect(project(RECORD, parseFields("svm.name,space.used.total", []), ["uuid"])).toEqual({
      uuid: "r1",
      svm: { name: "vs0", _links: { self: { href: "/api/svm/svms/s1" } } },
      space: { used: { total: 3 } },
      _links: RECORD._links,
    });
    expect(project(RECORD, parseFields("users.name", []), ["uuid"])).toEqual({
      uuid: "r1",
      users: [{ name: "a" }, { name: "b" }],
      _links: RECORD._links,
    });
    expect(project(RECORD, { all: true }, ["uuid"])).toBe(RECORD);
    expect(project(RECORD, parseFields("nope.deeper", []), [])).toEqual({ _links: RECORD._links });
  });
});
