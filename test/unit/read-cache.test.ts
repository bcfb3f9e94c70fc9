import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { CACHEABLE_FIELDS } from "../../src/emulation/read-model/graphql.js";
import { isCacheableQuery as cacheable } from "../../src/platform/graphql/read-cache.js";
import { graphqlSchema } from "../../src/schema.js";

const schema = graphqlSchema();
import { RULE_PAGE_FIELDS } from "../../src/storage/quota-rules/read-cache.js";

const isCacheableQuery = (s: typeof schema, q: ReturnType<typeof parse>) => cacheable(s, q, CACHEABLE_FIELDS);

describe("GraphQL read cache: which queries may be answered from memory", () => {
  it("names only fields that exist (a rename must not silently stop the cache, or keep a stale name)", () => {
    for (const coordinate of [...CACHEABLE_FIELDS, ...RULE_PAGE_FIELDS]) {
      const [type, field] = coordinate.split(".");
      const t = schema.getType(type) as { getFields?: () => Record<string, unknown> } | undefined;
      expect(t?.getFields?.()[field], coordinate).toBeDefined();
    }
  });

  it("accepts a topology query, fragments and __typename included", () => {
    const q = parse(`query($id: ID!) { project(id: $id) { __typename id name ...N links { totalCount edges { cursor node { id endpoints { node { id } } } } } } }
      fragment N on Project { nodes(first: 5) { pageInfo { hasNextPage endCursor } edges { node { id status ports { name } } } } }`);
    expect(isCacheableQuery(schema, q)).toBe(true);
  });

  it("refuses mutations, several operations, and any field a write can change without an event", () => {
    expect(isCacheableQuery(schema, parse(`mutation { deleteProject(input: { id: "x" }) { __typename } }`))).toBe(false);
    expect(isCacheableQuery(schema, parse(`query A { projects { totalCount } } query B { projects { totalCount } }`))).toBe(false);
    expect(isCacheableQuery(schema, parse(`{ project(id: "x") { id snapshots { edges { node { name } } } } }`))).toBe(false);
    expect(isCacheableQuery(schema, parse(`{ computes { edges { node { id connected } } } }`))).toBe(false);
    expect(isCacheableQuery(schema, parse(`{ projects { edges { node { id } } } svms { name } }`))).toBe(false);
  });

  it("rule pages: the page query is cacheable, jobs and reports are not", () => {
    const page = parse(`{ quotaRules(first: 50, filter: { svmName: { eq: "vs0" } }) { totalCount edges { node { id uuid type qtreeName qtree { qtreeId name qtree { id } } users { name id } volume { id name svm { id name } } } } pageInfo { hasNextPage endCursor } } }`);
    expect(cacheable(schema, page, RULE_PAGE_FIELDS)).toBe(true);
    expect(cacheable(schema, parse(`{ quotaRules(first: 1) { edges { node { uuid } } } job(id: "x") { state } }`), RULE_PAGE_FIELDS)).toBe(false);
    expect(cacheable(schema, page, CACHEABLE_FIELDS)).toBe(false); // each feature caches only its own fields
  });
});
