import net from "node:net";
import { createClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { busSubscribed, call, gql, startTestServer, type TestServer } from "../support/server.js";

/** Two instances sharing one database and one Redis: an event published on B reaches a subscriber on A. */
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

async function reachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port || 6379), u.hostname, () => (sock.end(), resolve(true)));
    sock.on("error", () => resolve(false));
  });
}

const redisUp = await reachable(REDIS_URL);
if (!redisUp && process.env.PATCHBAY_TEST_REQUIRE_REDIS) throw new Error(`Redis is required but not reachable at ${REDIS_URL}`);

describe.skipIf(!redisUp)("event bus over Redis (two instances)", () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ redisUrl: REDIS_URL });
    b = await startTestServer({ redisUrl: REDIS_URL }, { databaseUrl: a.databaseUrl, dataDir: a.dataDir });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it("delivers a change made on B to a graphql-ws subscriber on A", async () => {
    await call(b.url, "POST", "/api/svm/svms?return_timeout=5", { name: "redis_svm" });
    await call(b.url, "POST", "/api/storage/volumes?return_timeout=5", { name: "rv", svm: { name: "redis_svm" } });
    const client = createClient({ url: a.url.replace("http", "ws") + "/graphql", webSocketImpl: WebSocket });
    const before = a.ctx.bus.subscriberCount();
    const got = new Promise<any>((resolve, reject) => {
      client.subscribe({ query: `subscription { quotaChanges(svm: { name: "redis_svm" }) { cursor kind rule { group { name } } } }` }, {
        next: (m) => resolve(m.data),
        error: reject,
        complete: () => {},
      });
    });
    await busSubscribed(a, before);
    const r = await gql(b.url, `mutation { createQuotaRule(input: { svm: { name: "redis_svm" }, volume: { name: "rv" }, type: GROUP, group: { name: "across" } }) { __typename } }`);
    expect(r.data?.createQuotaRule.__typename, JSON.stringify(r)).toBe("MutationCreateQuotaRuleSuccess");
    const event = await got;
    expect(event.quotaChanges).toMatchObject({ kind: "RULE_CREATED", rule: { group: { name: "across" } } });
    expect(event.quotaChanges.cursor).toMatch(/^\d+-\d+$/); // a Redis stream id: shared across instances
    await client.dispose();
  });
});
