import { describe, expect, it } from "vitest";
import { buildWhere, FILTER_LIMITS, parseTerms, type FilterField } from "../../src/storage/ontap/filter.js";
import { parseCollectionQuery, parseWriteQuery } from "../../src/storage/ontap/query.js";

/** The ONTAP query language and collection parameters, without a server or a database. */
const FIELDS: Record<string, FilterField> = {
  name: { type: "string", column: "name" },
  comment: { type: "string", column: "comment", nullable: true },
  size: { type: "bigint", column: "size" },
  "svm.name": { type: "string", column: "name", path: ["svm"] },
  "users.name": { type: "string", column: "name", many: "users", nullable: true },
  enabled: { type: "boolean", column: "enabled" },
};
const rejection = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return { message: (e as Error).message, ...(e as { detail?: object }).detail };
  }
  throw new Error("no error");
};

describe("unit: ONTAP filter terms", () => {
  it("splits alternatives on | and , and reads the operators", () => {
    expect(parseTerms("a|b,c")).toEqual([
      { op: "eq", value: "a" },
      { op: "eq", value: "b" },
      { op: "eq", value: "c" },
    ]);
    expect(parseTerms("<=5|>=6|<7|>8|!x")).toEqual([
      { op: "lte", value: "5" },
      { op: "gte", value: "6" },
      { op: "lt", value: "7" },
      { op: "gt", value: "8" },
      { op: "not", value: "x" },
    ]);
    expect(parseTerms("null|!null")).toEqual([{ op: "null" }, { op: "notNull" }]);
    expect(parseTerms("vol*|!*tmp*")).toEqual([
      { op: "like", parts: ["vol", ""] },
      { op: "notLike", parts: ["", "tmp", ""] },
    ]);
  });

  it("bounds alternatives, term length and wildcards", () => {
    expect(parseTerms(Array(FILTER_LIMITS.maxAlternatives).fill("a").join("|"))).toHaveLength(FILTER_LIMITS.maxAlternatives);
    expect(rejection(() => parseTerms(Array(FILTER_LIMITS.maxAlternatives + 1).fill("a").join("|"), "name"))).toMatchObject({
      code: "262185",
      target: "name",
    });
    expect(() => parseTerms("x".repeat(FILTER_LIMITS.maxTermLength + 1))).toThrow(/at most 512 characters/);
    expect(() => parseTerms("*".repeat(FILTER_LIMITS.maxWildcards + 1))).toThrow(/at most 8 wildcards/);
  });
});

describe("unit: ONTAP filters → Prisma where", () => {
  it("no filter matches everything; several filters AND together", async () => {
    expect(await buildWhere({}, FIELDS)).toEqual({});
    expect(await buildWhere({ name: "a", size: ">10" }, FIELDS)).toEqual({ AND: [{ name: "a" }, { size: { gt: 10n } }] });
  });

  it("alternatives OR together; wildcards become startsWith / endsWith / contains", async () => {
    expect(await buildWhere({ name: "a|b*" }, FIELDS)).toEqual({ AND: [{ OR: [{ name: "a" }, { AND: [{ name: { startsWith: "b" } }] }] }] });
    expect(await buildWhere({ name: "*x*y" }, FIELDS)).toEqual({ AND: [{ AND: [{ name: { endsWith: "y" } }, { name: { contains: "x" } }] }] });
  });

  it("null on a required column matches nothing, !null everything; on a nullable one they test NULL", async () => {
    expect(await buildWhere({ name: "null" }, FIELDS)).toEqual({ AND: [{ name: { in: [] } }] });
    expect(await buildWhere({ name: "!null" }, FIELDS)).toEqual({ AND: [{}] });
    expect(await buildWhere({ comment: "null" }, FIELDS)).toEqual({ AND: [{ comment: null }] });
    expect(await buildWhere({ comment: "!*x" }, FIELDS)).toEqual({
      AND: [{ NOT: { AND: [{ comment: { endsWith: "x" } }] }, comment: { not: null } }],
    });
  });

  it("dotted fields walk relations; array fields match when some element matches", async () => {
    expect(await buildWhere({ "svm.name": "vs0" }, FIELDS)).toEqual({ AND: [{ svm: { name: "vs0" } }] });
    expect(await buildWhere({ "users.name": "bob" }, FIELDS)).toEqual({ AND: [{ users: { some: { name: "bob" } } }] });
    expect(await buildWhere({ "users.name": "null" }, FIELDS)).toEqual({ AND: [{ users: { none: { name: { not: null } } } }] });
  });

  it("values are typed: 64-bit integers, booleans; wildcards only on strings", async () => {
    expect(await buildWhere({ size: "9223372036854775807" }, FIELDS)).toEqual({ AND: [{ size: 9223372036854775807n }] });
    await expect(buildWhere({ size: "9223372036854775808" }, FIELDS)).rejects.toThrow("expected an integer from -9223372036854775808 to 9223372036854775807");
    await expect(buildWhere({ size: "1*" }, FIELDS)).rejects.toThrow(/a value without wildcards/);
    expect(await buildWhere({ enabled: "true" }, FIELDS)).toEqual({ AND: [{ enabled: true }] });
    await expect(buildWhere({ enabled: ">true" }, FIELDS)).rejects.toThrow(/true or false/);
  });

  it("an unknown field is an unexpected argument, prototype names included", async () => {
    await expect(buildWhere({ colour: "red" }, FIELDS)).rejects.toMatchObject({ message: 'Unexpected argument "colour".', detail: { code: "262179" } });
    await expect(buildWhere({ constructor: "x" }, FIELDS)).rejects.toMatchObject({ detail: { code: "262179", target: "constructor" } });
  });
});

describe("unit: ONTAP collection and write query parameters", () => {
  const sortable = new Set(["name", "size"]);

  it("splits control parameters from filters, with ONTAP's defaults", () => {
    expect(parseCollectionQuery({ name: "a*", fields: "size" }, FIELDS, sortable)).toEqual({
      fields: "size",
      maxRecords: undefined,
      returnRecords: true,
      returnTimeout: 15,
      orderBy: [],
      startAfter: undefined,
      filters: { name: "a*" },
    });
  });

  it("reads order_by, max_records, return_records, return_timeout and the cursor", () => {
    const q = parseCollectionQuery(
      { order_by: "size desc, name", max_records: "10", return_records: "false", return_timeout: "0", "start.uuid": "u1", fields: ["a", "b"] },
      FIELDS,
      sortable,
    );
    expect(q).toMatchObject({
      orderBy: [
        { field: "size", dir: "desc" },
        { field: "name", dir: "asc" },
      ],
      maxRecords: 10,
      returnRecords: false,
      returnTimeout: 0,
      startAfter: "u1",
      fields: "a,b",
    });
  });

  it("refuses bad values with the parameter as target", () => {
    const bad = (query: Record<string, unknown>) => rejection(() => parseCollectionQuery(query, FIELDS, sortable));
    expect(bad({ max_records: "0" })).toMatchObject({ target: "max_records" });
    expect(bad({ max_records: "10001" })).toMatchObject({ target: "max_records" });
    expect(bad({ return_timeout: "121" })).toMatchObject({ target: "return_timeout" });
    expect(bad({ return_records: "yes" })).toMatchObject({ target: "return_records" });
    expect(bad({ order_by: "comment" })).toMatchObject({ target: "order_by" });
    expect(bad({ order_by: "name up" })).toMatchObject({ target: "order_by" });
    expect(bad({ name: ["a", "b"] })).toMatchObject({ message: 'Parameter "name" was given more than once.' });
    expect(bad({ colour: "red" })).toMatchObject({ code: "262179", target: "colour" });
    expect(bad({ "start.offset": "1e3" })).toMatchObject({ target: "start.offset" });
  });

  it("write requests take only return_timeout (and return_records where allowed)", () => {
    expect(parseWriteQuery({}, false)).toEqual({ returnTimeout: 0, returnRecords: false });
    expect(parseWriteQuery({ return_timeout: "5", return_records: "true" }, true)).toEqual({ returnTimeout: 5, returnRecords: true });
    expect(rejection(() => parseWriteQuery({ return_records: "true" }, false))).toMatchObject({ target: "return_records" });
    expect(rejection(() => parseWriteQuery({ name: "x" }, true))).toMatchObject({ code: "262179" });
  });
});
