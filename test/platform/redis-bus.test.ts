import { createClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { REDIS_URL, redisUp, useInstancePair } from "../support/redis.js";
import { notificationSocket } from "../support/gns3-ws.js";
import { busSubscribed, call, gql, startTestServer, type TestServer } from "../support/server.js";

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
    expect(r.data?.createQuotaRule.__typename, JSON.stringify(r)).toBe("CreateQuotaRulePayload");
    const event = await got;
    expect(event.quotaChanges).toMatchObject({ kind: "RULE_CREATED", rule: { group: { name: "across" } } });
    expect(event.quotaChanges.cursor).toMatch(/^\d+-\d+$/); // a Redis stream id: shared across instances
    await client.dispose();
  });
});

/**
 * Issue 20: Redis keys carry a deployment namespace derived from the database. A deployment on its own database
 * shares the Redis but none of the events; the two instances of one deployment (one database) still share them.
 * Read on GNS3's controller notification stream, which forwards every project.* event it is given.
 */
describe.skipIf(!redisUp)("deployments sharing one Redis", () => {
  const pair = useInstancePair();
  let other: TestServer; // another deployment: its own database, the same Redis
  beforeAll(async () => void (other = await startTestServer({ redisUrl: REDIS_URL })));
  afterAll(() => other.close());

  const stream = async (s: TestServer) => {
    const before = s.ctx.bus.subscriberCount();
    const socket = await notificationSocket(`${s.url.replace(/^http/, "ws")}/v2/notifications/ws`);
    await busSubscribed(s, before);
    return socket;
  };
  const created = (name: string) => (e: any) => e.name === name;

  it("a project created through one instance reaches its other instance and not the other deployment", async () => {
    const { a, b } = pair;
    const [onA, onOther] = [await stream(a), await stream(other)];
    try {
      expect((await call(b.url, "POST", "/v2/projects", { name: "from-b" })).status).toBe(201);
      await onA.next("project.created", created("from-b"));
      // In one shared stream B's event would come first: the other deployment's first project.created is its own.
      expect((await call(other.url, "POST", "/v2/projects", { name: "from-other" })).status).toBe(201);
      expect((await onOther.next("project.created")).event.name).toBe("from-other");
      expect(onOther.messages.map((m) => m.event?.name)).not.toContain("from-b");
    } finally {
      onA.close();
      onOther.close();
    }
  });
});
