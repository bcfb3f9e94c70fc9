import { createClient } from "graphql-ws";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { redisUp, useInstancePair } from "../support/redis.js";
import { busSubscribed, call, gql } from "../support/server.js";

/** Two instances sharing one database and one Redis: an event published on B reaches a subscriber on A. */
describe.skipIf(!redisUp)("event bus over Redis (two instances)", () => {
  const pair = useInstancePair();
  it("delivers a change made on B to a graphql-ws subscriber on A", async () => {
    const { a, b } = pair;
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
