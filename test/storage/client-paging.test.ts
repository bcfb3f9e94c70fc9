import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, onPostgres, startTestServer, type TestServer } from "../support/server.js";
import { seedGroupRules } from "./fixture.js";

/**
 * Issue 22's client task "page 100,000 quota rules of one volume", through the real server over GraphQL, counting
 * the requests a client makes: the setup (an SVM and a volume), then one request per page of 100 (the maximum),
 * following `pageInfo.endCursor` until `hasNextPage` is false. The README's storage GraphQL section quotes the count.
 */
const RULES = 100_000;
const PAGE_SIZE = 100;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const PAGE = `query($volume: String!, $after: String, $first: Boolean!) {
  quotaRules(first: ${PAGE_SIZE}, after: $after, filter: { volumeUuid: { eq: $volume } }) {
    totalCount @include(if: $first)
    pageInfo { hasNextPage endCursor }
    edges { node { id uuid type group { name } } }
  }
}`;

describe(`client task: page ${RULES.toLocaleString("en")} quota rules of one volume (${onPostgres ? "PostgreSQL" : "SQLite"})`, () => {
  it(`takes 2 setup requests and ${RULES / PAGE_SIZE} page requests, every rule once`, { timeout: 300_000 }, async () => {
    let requests = 0;
    const ask = async (query: string, variables: Record<string, unknown> = {}) => {
      requests++;
      const r = await gql(s.url, query, variables);
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return r.data;
    };
    const { svm } = (await ask(`mutation { createSvm(input: { name: "pages" }) { ... on CreateSvmPayload { svm { id uuid } } } }`)).createSvm;
    const { volume } = (await ask(`mutation($svm: ID!) { createVolume(input: { svm: { id: $svm }, name: "pages" }) { ... on CreateVolumePayload { volume { uuid } } } }`, { svm: svm.id }))
      .createVolume;
    expect(requests).toBe(2);
    const seeding = performance.now();
    await seedGroupRules(s, { svmUuid: svm.uuid, volumeUuid: volume.uuid }, RULES);
    const paging = performance.now();

    const seen = new Set<string>();
    let after: string | null = null;
    let total: number | undefined;
    do {
      const page: { totalCount?: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { id: string } }[] } = (
        await ask(PAGE, { volume: volume.uuid, after, first: after === null })
      ).quotaRules;
      total ??= page.totalCount;
      for (const e of page.edges) seen.add(e.node.id);
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after !== null);
    const done = performance.now();

    expect(total).toBe(RULES);
    expect(seen.size).toBe(RULES);
    expect(requests).toBe(2 + RULES / PAGE_SIZE);
    console.log(`${RULES} rules: seeded in ${((paging - seeding) / 1000).toFixed(1)} s, paged in ${requests - 2} requests, ${((done - paging) / 1000).toFixed(1)} s`);
  });
});
