import { randomUUID } from "node:crypto";
import { getIntrospectionQuery } from "graphql";
import { createClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { zip } from "../emulation/archive-support.js";
import { postRule, storageFixture } from "../storage/fixture.js";

/**
 * Hostile input (issue 8, items 1, 5, 8, 12): prototype keys, unbounded GraphQL documents and filters, malformed
 * bodies, paths and filters, and GraphQL client mistakes. Each answers a clear 4xx (or GraphQL error) in the
 * face's own shape, quickly, and the server keeps serving every route.
 */
let s: TestServer;
let ids: { svmUuid: string; volumeUuid: string; ruleUuid: string; qtree: string; projectId: string };

beforeAll(async () => {
  s = await startTestServer();
  const f = await storageFixture(s.url);
  const rule = await postRule(s.url, { type: "tree", "qtree.name": "qt1", "files.hard_limit": "3" });
  expect(rule.status, rule.text).toBe(201);
  const qtrees = await call(s.url, "GET", `/api/storage/qtrees?volume.uuid=${f.volumeUuid}&name=qt1&fields=id`);
  const project = await call(s.url, "POST", "/v2/projects", { name: "hostile" });
  expect(project.status, project.text).toBe(201);
  ids = { ...f, ruleUuid: rule.body.records[0].uuid, qtree: `${f.volumeUuid}/${qtrees.body.records[0].id}`, projectId: project.body.project_id };
});
afterAll(() => s.close());

const ontapError = (r: { status: number; body: any; text: string }, status: number) => {
  expect(r.status, r.text).toBe(status);
  expect(r.body.error.message, r.text).toEqual(expect.any(String));
  return r.body.error as { message: string; code: string; target?: string };
};
const gns3Error = (r: { status: number; body: any; text: string }, status: number) => {
  expect(r.status, r.text).toBe(status);
  expect(r.body, r.text).toMatchObject({ status, message: expect.any(String) });
  return r.body.message as string;
};

/** Every database-backed route of both faces still answers normally. */
async function expectServing() {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty("polluted");
  for (const url of ["/api/svm/svms", "/api/storage/volumes", "/api/storage/qtrees", "/api/storage/quota/rules", "/api/storage/quota/reports", "/api/cluster"]) {
    const r = await call(s.url, "GET", url);
    expect(r.status, `${url}: ${r.text}`).toBe(200);
  }
  const svm = await call(s.url, "POST", "/api/svm/svms?return_timeout=5", { name: `alive${Date.now()}` });
  expect(svm.status, svm.text).toBe(201);
  expect((await call(s.url, "GET", "/v2/projects")).status).toBe(200);
  expect((await gql(s.url, "{ svms { edges { node { name } } } }")).errors).toBeUndefined();
}

describe("item 1: no client key reaches an object prototype", () => {
  const bodies = [
    { "__proto__.polluted": true },
    JSON.parse('{"__proto__": {"polluted": true}}'),
    { "constructor.prototype.polluted": true },
    { constructor: { prototype: { polluted: true } } },
    { "svm.__proto__.polluted": true },
  ];

  it("refuses prototype keys in every ONTAP write with 400 Unexpected argument, and keeps serving", async () => {
    const writes = [
      ["PATCH", `/api/storage/volumes/${ids.volumeUuid}?return_timeout=30`],
      ["PATCH", `/api/storage/qtrees/${ids.qtree}?return_timeout=30`],
      ["PATCH", `/api/storage/quota/rules/${ids.ruleUuid}?return_timeout=30`],
      ["POST", "/api/svm/svms?return_timeout=30"],
      ["POST", "/api/storage/volumes?return_timeout=30"],
      ["POST", "/api/storage/quota/rules?return_timeout=30"],
    ];
    for (const [method, url] of writes) {
      for (const body of bodies) {
        const err = ontapError(await call(s.url, method, url, JSON.stringify(body)), 400);
        expect(err.code, `${method} ${url} ${JSON.stringify(body)}`).toBe("262179");
        expect(err.message).toMatch(/^Unexpected argument "(__proto__|constructor|svm\.__proto__)/);
      }
    }
    await expectServing();
  });

  it("refuses prototype names in ONTAP query parameters and fields=", async () => {
    for (const q of ["constructor=x", "toString=x", "__proto__=x", "hasOwnProperty=1"]) {
      expect(ontapError(await call(s.url, "GET", `/api/storage/quota/rules?${q}`), 400).code).toBe("262179");
    }
    for (const f of ["__proto__.polluted", "constructor.prototype", "svm.__proto__"]) {
      ontapError(await call(s.url, "GET", `/api/storage/volumes?fields=${f}`), 400);
      ontapError(await call(s.url, "GET", `/api/storage/volumes/${ids.volumeUuid}?fields=${f}`), 400);
    }
    await expectServing();
  });

  it("refuses prototype keys in GNS3 bodies (nested too), query strings and GraphQL JSON values", async () => {
    gns3Error(await call(s.url, "POST", "/v2/projects", '{"name": "p1", "__proto__": {"polluted": true}}'), 400);
    gns3Error(await call(s.url, "POST", `/v2/projects/${ids.projectId}/nodes`, '{"name": "n", "node_type": "vpcs", "compute_id": "local", "properties": {"__proto__": {"polluted": 1}}}'), 400);
    gns3Error(await call(s.url, "PUT", `/v2/projects/${ids.projectId}?__proto__=x`, {}), 400);
    gns3Error(await call(s.url, "POST", "/v2/projects?constructor=x", { name: "p2" }), 400);

    const importTopology = async (topology: string) => {
      const archive = await zip({ "project.gns3": `{"name": "z", "project_id": "${randomUUID()}", "revision": 9, "type": "topology", "version": "2.2.59", "topology": ${topology}}` });
      const r = await fetch(`${s.url}/v2/projects/${randomUUID()}/import?name=zipped${topology.length}`, { method: "POST", body: new Uint8Array(archive) });
      return { status: r.status, body: await r.json() };
    };
    expect(await importTopology('{"nodes": [], "links": [], "drawings": [], "computes": []}')).toMatchObject({ status: 201 });
    expect(await importTopology('{"nodes": [], "__proto__": {"polluted": true}}')).toMatchObject({ status: 409, body: { message: expect.stringMatching(/corrupted/) } });

    const viaVariable = await gql(s.url, "mutation($s: JSON!) { updateSettings(input: { settings: $s }) { __typename } }", { s: JSON.parse('{"a": {"__proto__": {"polluted": 1}}}') });
    expect(viaVariable.errors?.[0].message).toMatch(/Forbidden key "__proto__"/);
    const viaLiteral = await gql(s.url, "mutation { updateSettings(input: { settings: {constructor: {prototype: {polluted: 1}}} }) { __typename } }");
    expect(viaLiteral.errors?.[0].message).toMatch(/Forbidden key "constructor"/);
    await expectServing();
  });
});

describe("item 5: GraphQL and filter resource limits answer at once", () => {
  const timed = async <T>(fn: () => Promise<T>) => {
    const t = performance.now();
    const result = await fn();
    return { result, ms: performance.now() - t };
  };

  it("refuses 10,000 aliases, a 10,000-arm or and a 2,000-deep or within milliseconds", async () => {
    const cases = [
      ["{" + Array.from({ length: 10_000 }, (_, i) => `a${i}: __typename`).join(" ") + "}", /more tha[nt] 10000 tokens/],
      ["{ quotaRules(filter: {or: [" + Array.from({ length: 10_000 }, () => '{svmName: {eq: "x"}}').join(",") + "]}) { totalCount } }", /more tha[nt] 10000 tokens/],
      ["{ quotaRules(filter: " + "{or: [".repeat(2_000) + "{}" + "]}".repeat(2_000) + ") { totalCount } }", /nests brackets deeper than 64/],
    ] as const;
    for (const [query, message] of cases) {
      const { result, ms } = await timed(() => gql(s.url, query));
      expect(result.errors?.[0].message).toMatch(message);
      expect(ms).toBeLessThan(1_000); // measured ~10-50 ms; was 1.9-2.8 s or a stack overflow
    }
    await expectServing();
  });

  it("bounds aliases, depth, field count (fragments expanded) and input lists before validation", async () => {
    const aliases = "{" + Array.from({ length: 101 }, (_, i) => `a${i}: __typename`).join(" ") + "}";
    expect((await gql(s.url, aliases)).errors?.[0].message).toBe("Query uses more than 100 aliases.");
    const deep = "{ __schema { types { fields { type { " + "ofType { ".repeat(12) + "name" + " }".repeat(12) + " } } } } }";
    expect((await gql(s.url, deep)).errors?.[0].message).toBe("Query is nested deeper than 15 levels.");
    const fragments = "{ ...F3 } fragment F0 on Query { " + "svms { name uuid } ".repeat(10) + "} " +
      [1, 2, 3].map((i) => `fragment F${i} on Query { ${Array.from({ length: 10 }, () => `...F${i - 1}`).join(" ")} }`).join(" ");
    expect((await gql(s.url, fragments)).errors?.[0].message).toBe("Query selects more than 1000 fields.");
    const arms = Array.from({ length: 101 }, () => ({ svmName: { eq: "x" } }));
    const listVar = await gql(s.url, "query($f: QuotaRuleFilter) { quotaRules(filter: $f) { totalCount } }", { f: { or: arms } });
    expect(listVar.errors?.[0].message).toBe("Input lists may hold at most 100 elements.");
    let nested: object = { svmName: { eq: "x" } };
    for (let i = 0; i < 10; i++) nested = { or: [nested] };
    const deepVar = await gql(s.url, "query($f: QuotaRuleFilter) { quotaRules(filter: $f) { totalCount } }", { f: nested });
    expect(deepVar.errors?.[0].message).toBe("Input values may nest at most 16 levels.");
  });

  it("still serves introspection and ordinary filters within the limits", async () => {
    expect((await gql(s.url, getIntrospectionQuery())).errors).toBeUndefined();
    const arms = Array.from({ length: 100 }, (_, i) => ({ qtreeName: { eq: i ? `q${i}` : "qt1" } }));
    const ok = await gql(s.url, "query($f: QuotaRuleFilter) { quotaRules(filter: $f) { totalCount } }", { f: { or: arms } });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.quotaRules.totalCount).toBe(1);
  });

  it("bounds ONTAP filters: alternatives, value length, wildcards, fields= and order_by entries", async () => {
    const rules = (q: string) => call(s.url, "GET", `/api/storage/quota/rules?${q}`);
    expect(ontapError(await rules(`qtree.name=${Array(101).fill("a").join("|")}`), 400).message).toMatch(/at most 100 alternatives/);
    expect((await rules(`qtree.name=${Array(100).fill("qt1").join("|")}`)).status).toBe(200);
    expect(ontapError(await rules(`qtree.name=${"a".repeat(513)}`), 400).message).toMatch(/at most 512 characters/);
    expect(ontapError(await rules(`qtree.name=${"a*".repeat(9)}`), 400).message).toMatch(/at most 8 wildcards/);
    expect((await rules(`qtree.name=${"q*".repeat(8)}`)).status).toBe(200);
    expect(ontapError(await rules(`fields=${Array(101).fill("uuid").join(",")}`), 400).target).toBe("fields");
    expect(ontapError(await rules(`order_by=${Array(50).fill("uuid").join(",")}`), 400).target).toBe("order_by");
  });
});

describe("item 8: malformed requests are 4xx in the face's error shape", () => {
  const deep = '{"a":'.repeat(20_000) + "1" + "}".repeat(20_000);

  it("deeply nested JSON: GNS3 and ONTAP answer 400", async () => {
    for (const [method, url] of [["POST", "/v2/projects"], ["PUT", `/v2/projects/${ids.projectId}`], ["POST", `/v2/projects/${ids.projectId}/nodes`], ["POST", "/v2/computes"]]) {
      expect(gns3Error(await call(s.url, method, url, deep), 400)).toMatch(/nested deeper than 64/);
    }
    expect(ontapError(await call(s.url, "POST", "/api/svm/svms", deep), 400).message).toMatch(/nested deeper than 64/);
    expect(ontapError(await call(s.url, "PATCH", `/api/storage/volumes/${ids.volumeUuid}`, `{"size": ${"[".repeat(100)}${"]".repeat(100)}}`), 400).message).toMatch(/nested deeper/);
    await expectServing();
  });

  it("bogus charset or content-encoding: 415 in the ONTAP envelope", async () => {
    const body = '{"name": "x"}';
    const charset = ontapError(await call(s.url, "POST", "/api/svm/svms", body, { "content-type": "application/json; charset=bogus" }), 415);
    expect(charset.message).toMatch(/unsupported charset/);
    const encoding = ontapError(await call(s.url, "POST", "/api/svm/svms", body, { "content-type": "application/json", "content-encoding": "bogus" }), 415);
    expect(encoding.message).toMatch(/unsupported content encoding/);
    const gns3 = await call(s.url, "POST", "/v2/projects", body, { "content-type": "application/json", "content-encoding": "bogus" });
    gns3Error(gns3, 415);
  });

  it("bad percent-encoding in a path: 400 on both faces", async () => {
    expect(ontapError(await call(s.url, "GET", "/api/svm/svms/%ff%fe"), 400).message).toMatch(/decode/);
    expect(ontapError(await call(s.url, "DELETE", "/api/storage/quota/rules/%E0%A4%A"), 400).message).toMatch(/decode/);
    expect(gns3Error(await call(s.url, "GET", "/v2/projects/%ff%fe"), 400)).toMatch(/decode/);
    expect(gns3Error(await call(s.url, "DELETE", `/v2/projects/${ids.projectId}/nodes/%c0`), 400)).toMatch(/decode/);
  });

  it("filters on required fields: * and !null match all, !* and null match none", async () => {
    const names = async (q: string) => {
      const r = await call(s.url, "GET", `/api/svm/svms?${q}`);
      expect(r.status, r.text).toBe(200);
      return r.body.num_records as number;
    };
    const all = await names("");
    expect(all).toBeGreaterThan(0);
    expect(await names("name=*")).toBe(all);
    expect(await names("name=!null")).toBe(all);
    expect(await names("name=!*")).toBe(0);
    expect(await names("name=null")).toBe(0);
    expect(await names("name=null|svm1")).toBe(1);
    expect((await call(s.url, "GET", "/api/storage/qtrees?id=null")).body.num_records).toBe(0);
    expect((await call(s.url, "GET", "/api/storage/volumes?quota.enabled=!null")).status).toBe(200);
  });

  it("out-of-range numbers and over-complex patterns: 400", async () => {
    ontapError(await call(s.url, "GET", "/api/storage/volumes?size=9999999999999999999"), 400);
    ontapError(await call(s.url, "GET", "/api/storage/qtrees?id=99999999999"), 400);
    ontapError(await call(s.url, "GET", `/api/svm/svms?name=${"*".repeat(2_000)}`), 400);
    ontapError(await call(s.url, "GET", "/api/svm/svms?order_by=name&start.offset=99999999999999999999&max_records=1"), 400);
    const patch = await call(s.url, "PATCH", `/api/storage/quota/rules/${ids.ruleUuid}?return_timeout=30`, { files: { hard_limit: "99999999999999999999" } });
    ontapError(patch, 400);
    await expectServing();
  });
});

describe("item 12: GraphQL client mistakes keep their message", () => {
  it("syntax errors, bad variables, ambiguous operations, GET mutations and invalid JSON", async () => {
    expect((await gql(s.url, "{ svms { name }")).errors?.[0].message).toMatch(/^Syntax Error/);
    const badVar = await gql(s.url, "query($n: Int!) { quotaRules(first: $n) { totalCount } }", { n: "many" });
    expect(badVar.errors?.[0].message).toMatch(/Variable "\$n" got invalid value "many"/);
    const badScalar = await gql(s.url, "query($f: QuotaRuleFilter) { quotaRules(filter: $f) { totalCount } }", { f: { spaceHardLimitBytes: { eq: "abc" } } });
    expect(badScalar.errors?.[0].message).toMatch(/BigInt must be an integer or a string of digits/);
    expect((await gql(s.url, "query A { __typename } query B { __typename }")).errors?.[0].message).not.toBe("Unexpected error.");
    const get = await call(s.url, "GET", `/graphql?query=${encodeURIComponent("mutation { updateSettings(input: { settings: {} }) { __typename } }")}`, undefined, { accept: "application/json" });
    expect(get.status).toBe(405);
    expect(get.body.errors[0].message).toMatch(/mutation operation from a POST request/);
    const invalid = await call(s.url, "POST", "/graphql", "{not json", { accept: "application/json" });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].message).toMatch(/invalid JSON/);
  });

  it("over graphql-ws too", async () => {
    const client = createClient({ url: s.url.replace("http", "ws") + "/graphql", webSocketImpl: WebSocket, retryAttempts: 0 });
    const run = (query: string) =>
      new Promise<string>((resolve) =>
        client.subscribe({ query }, { next: () => {}, error: (e) => resolve(Array.isArray(e) ? e[0].message : String((e as Error).message ?? e)), complete: () => resolve("completed") }),
      );
    expect(await run("{ svms { name }")).toMatch(/^Syntax Error/);
    expect(await run("{ nope }")).toMatch(/Cannot query field "nope"/);
    expect(await run("{" + "a: __typename ".repeat(101) + "}")).toMatch(/more than 100 aliases/);
    await client.dispose();
  });
});
