import { describe, expect, it } from "vitest";
import { FieldError, fieldNames, inFaceTerms, parseInput } from "../../../src/storage/core/input.js";
import { ontapJobDescription } from "../../../src/storage/jobs/serialize.js";
import { describeJob } from "../../../src/storage/jobs/operations.js";
import { WireForm } from "../../../src/storage/ontap/wire.js";
import { createRuleSchema, ruleLimitsSchema } from "../../../src/storage/quota-rules/schema.js";
import { updateQtreeSchema } from "../../../src/storage/qtrees/schema.js";

/** The storage operations' input contracts, without a server: domain rules, and the ONTAP wire mapped onto them. */
const rule = (input: object) => parseInput(createRuleSchema, { svm: { name: "s" }, volume: { name: "v" }, ...input } as never);
const fails = (run: () => unknown) => {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(FieldError);
    return e as FieldError;
  }
  throw new Error("expected a FieldError");
};

describe("quota rule contract", () => {
  it("rounds space up to whole KiB, keeps files exact, reads -1 and null as unlimited", () => {
    expect(rule({ type: "tree", qtreeName: "q", spaceHardLimit: 1n, spaceSoftLimit: 2048n, filesHardLimit: 7n, filesSoftLimit: -1n }).limits).toEqual({
      spaceHardLimit: 1024n,
      spaceSoftLimit: 2048n,
      filesHardLimit: 7n,
      filesSoftLimit: null,
    });
    expect(parseInput(ruleLimitsSchema, { spaceHardLimit: null })).toEqual({ spaceHardLimit: null });
  });

  it("stores a numeric user name as a UID, and an empty qtree of a user rule as volume level", () => {
    const r = rule({ type: "user", qtreeName: "", users: [{ name: "1001" }, { name: "ann" }, { id: "7" }] });
    expect(r.users).toEqual([{ name: null, userId: "1001" }, { name: "ann", userId: null }, { name: null, userId: "7" }]);
    expect(r.qtreeName).toBeNull();
  });

  it.each([
    [{ type: "tree" }, "qtreeName", "Missing required field \"qtreeName\"."],
    [{ type: "tree", qtreeName: "q", users: [{ name: "a" }] }, "users", "\"users\" is only valid for user rules."],
    [{ type: "group", group: { name: "g", id: "1" } }, "group", "Specify either group.name or group.id, not both."],
    [{ type: "user", users: [{ name: "a" }, {}] }, "users[1]", "Each user must have either a name or an id, not both."],
    [{ type: "user", users: [{ id: "x" }] }, "users.id", "Invalid value for field \"users.id\": expected a numeric user id."],
    [{ type: "tree", qtreeName: "q", filesHardLimit: -2n }, "filesHardLimit", expect.stringContaining("non-negative")],
    [{ type: "tree", qtreeName: "q", filesHardLimit: 2n ** 63n }, "filesHardLimit", expect.stringContaining("an integer")],
    [{ type: "project" }, "type", "Invalid value for field \"type\": expected one of user, group, tree."],
  ])("refuses case %# at its domain path", (input, target, message) => {
    const e = fails(() => rule(input));
    expect(e.detail.target).toBe(target);
    expect(e.message).toEqual(message);
  });
});

describe("a face renames the fields an error names", () => {
  it("words the same problem with the face's names", () => {
    const e = fails(() => rule({ type: "group", group: {}, spaceHardLimit: 0n }));
    const ontap = inFaceTerms(e, fieldNames({ "group.name": "group.name", spaceHardLimit: "space.hard_limit" })) as FieldError;
    expect([ontap.detail.target, ontap.message]).toEqual(["group.name", 'Missing required field "group.name".']);
    const limits = fails(() => parseInput(ruleLimitsSchema, { userMapping: "yes" as never }));
    expect((inFaceTerms(limits, fieldNames({ userMapping: "limits.userMapping" })) as FieldError).detail.target).toBe("limits.userMapping");
  });
});

describe("ONTAP wire form", () => {
  const form = new WireForm(
    { "qtree.name": ["qtreeName", "text"], "users.name": ["users.name", "text"], "space.hard_limit": ["spaceHardLimit", "limit"], user_mapping: ["userMapping", "boolean"], "svm.name": ["svm.name", "text"] },
    ["users"],
  );

  it("maps Ansible's flat strings onto the domain input, leaving what it cannot read to the schema", () => {
    expect(form.toDomain({ "qtree.name": "", "users.name": ["a", 5], "space.hard_limit": "-", user_mapping: "on", "svm.name": "s" })).toEqual({
      qtreeName: "",
      users: [{ name: "a" }, { name: "5" }],
      spaceHardLimit: null,
      userMapping: true,
      svm: { name: "s" },
    });
    expect(form.toDomain({ space: { hard_limit: "ten" }, svm: {} })).toEqual({ spaceHardLimit: "ten", svm: {} });
  });

  it("refuses keys it does not know, by wire name", () => {
    expect(() => form.toDomain({ "qtree.id": 1 })).toThrow('Unexpected argument "qtree.id".');
  });

  it("names domain paths by their wire names", () => {
    expect([form.nameOf(["spaceHardLimit"]), form.nameOf(["users", 2]), form.nameOf(["users", 0, "name"]), form.nameOf(["qtreeName"])]).toEqual([
      "space.hard_limit",
      "users[2]",
      "users.name",
      "qtree.name",
    ]);
  });
});

describe("job descriptions", () => {
  it("are domain terms, shown to ONTAP clients as the request line that started them", () => {
    expect(ontapJobDescription(describeJob({ action: "create", resource: "quota rule", key: "u1" }))).toBe("POST /api/storage/quota/rules");
    expect(ontapJobDescription(describeJob({ action: "update", resource: "qtree", key: "v/3" }))).toBe("PATCH /api/storage/qtrees/v/3");
    expect(ontapJobDescription(describeJob({ action: "delete", resource: "svm", key: "s" }))).toBe("DELETE /api/svm/svms/s");
    expect(ontapJobDescription("POST /api/storage/quota/rules")).toBe("POST /api/storage/quota/rules");
  });

  it("qtree rename input is checked before any job starts", () => {
    expect(fails(() => parseInput(updateQtreeSchema, { name: ".." })).message).toBe('Invalid qtree name "..".');
  });
});
