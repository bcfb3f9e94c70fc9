import fs from "node:fs";
import { buildSchema, isObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { printedSchema } from "../../src/schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Every REST route of both faces has its GraphQL operation, listed in the README's mapping table: the routes come
 * from the server's own route table, the operations from the schema as `npm run schema:print` prints it (built
 * here from the code, not read from schema.graphql).
 */
const README = new URL("../../README.md", import.meta.url);
const SECTION = "## GraphQL: every REST route and its operation";
/** The compute-level API is what a controller drives on a remote compute, machine to machine: no GraphQL face. */
const EXEMPT = /^\/v2\/compute\//;

const ROUTE = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)$/;
const COORDINATE = /^([A-Z]\w*)\.([a-z]\w*)$/;

interface Row {
  routes: string[];
  operations: string[];
}

/** The rows of the README's mapping table: the backticked routes of the first cell, the schema coordinates of the second. */
function mappingTable(): Row[] {
  const text = fs.readFileSync(README, "utf8");
  const start = text.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`README has no "${SECTION}" section`);
  const end = text.indexOf("\n## ", start + 1);
  const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  return text
    .slice(start, end < 0 ? undefined : end)
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [rest, graphql = ""] = line.split(" | ");
      return { routes: ticked(rest).filter((r) => ROUTE.test(r)), operations: ticked(graphql).filter((c) => COORDINATE.test(c)) };
    });
}

describe("GraphQL parity: every REST route of both faces has its operation", () => {
  let s: TestServer;
  let served: string[];
  const rows = mappingTable();
  beforeAll(async () => {
    s = await startTestServer();
    // Express syntax written as the README writes routes: `:id` → `{id}`, a `*path` tail → `{path}`.
    served = s
      .routes()
      .filter((r) => /^\/(v2|api)\//.test(r.path) && !EXEMPT.test(r.path))
      .map((r) => `${r.method} ${r.path.replace(/[:*](\w+)/g, "{$1}")}`);
  });
  afterAll(() => s?.close());

  it("lists every served route (except the compute-level API) in the README table", () => {
    expect(served.length).toBeGreaterThan(90);
    const listed = new Set(rows.flatMap((r) => r.routes));
    expect(served.filter((r) => !listed.has(r))).toEqual([]);
  });

  it("lists only routes the server serves, each with at least one operation", () => {
    const servedSet = new Set(served);
    expect(rows.flatMap((r) => r.routes).filter((r) => !servedSet.has(r))).toEqual([]);
    expect(rows.filter((r) => r.operations.length === 0)).toEqual([]);
  });

  it("names only operations the printed schema has", () => {
    const schema = buildSchema(printedSchema()); // as schema.graphql would hold it, read back
    const missing = rows
      .flatMap((r) => r.operations)
      .filter((coordinate) => {
        const [, type, field] = COORDINATE.exec(coordinate)!;
        const t = schema.getType(type);
        return !(isObjectType(t) && field in t.getFields());
      });
    expect(missing).toEqual([]);
  });
});
