import fs from "node:fs";
import path from "node:path";
import { Kind, parse, print } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPHIQL_EXAMPLES } from "../../src/graphiql-examples.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 22 point 6: GraphiQL opens with the README's GraphQL examples (one tab per operation) instead of its stock
 * welcome text — and they are the README's operations, so they cannot drift apart (the README's run in CI).
 */
const README = fs.readFileSync(path.resolve(import.meta.dirname, "../../README.md"), "utf8");

/** The operations of the README's annotated ```graphql blocks, printed (comments and layout aside). */
function readmeOperations(): string[] {
  const blocks = [...README.matchAll(/<!-- example: [\w-]+ -->\n```graphql\n([\s\S]*?)\n```/g)].map((m) => m[1]);
  return blocks.flatMap((b) => parse(b).definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).map((d) => print(d)));
}

const exampleOperations = () => GRAPHIQL_EXAMPLES.flatMap((t) => parse(t.query).definitions.map((d) => print(d)));

describe("GraphiQL's example operations", () => {
  it("are the README's GraphQL examples, every one of them, one operation a tab", () => {
    const readme = readmeOperations();
    expect(readme.length).toBeGreaterThanOrEqual(10);
    expect(exampleOperations().sort()).toEqual([...readme].sort());
    for (const t of GRAPHIQL_EXAMPLES) expect(parse(t.query).definitions, t.query).toHaveLength(1);
  });

  describe("served", () => {
    let s: TestServer;
    beforeAll(async () => void (s = await startTestServer()));
    afterAll(() => s.close());

    it("GET /graphql in a browser opens GraphiQL with the examples as its tabs", async () => {
      const res = await fetch(`${s.url}/graphql`, { headers: { accept: "text/html" } });
      expect(res.status).toBe(200);
      const page = await res.text();
      expect(page).toContain("Patchbay GraphiQL");
      // The options are in the page as JSON: every tab's query, escaped as JSON escapes it.
      for (const t of GRAPHIQL_EXAMPLES) expect(page).toContain(JSON.stringify(t.query));
      expect(page).toContain('"defaultTabs":');
      expect(page).toContain("quotaRules(first: 20, filter:");
    });
  });
});
