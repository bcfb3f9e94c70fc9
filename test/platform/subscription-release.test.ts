import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";

/**
 * A subscription whose client leaves releases its event-bus subscriber at once, even on a channel where nothing
 * happens (GraphQL subscriptions used to keep it until the next event there: a leak per quiet subscription).
 */
let s: TestServer;
beforeAll(async () => void (s = await startTestServer()));
afterAll(() => s.close());

const subscribers = () => s.ctx.bus.subscriberCount();
const settle = () => new Promise((r) => setTimeout(r, 300));

async function until(what: () => boolean) {
  for (let i = 0; i < 50 && !what(); i++) await new Promise((r) => setTimeout(r, 20));
}

it("releases the subscribers of closed graphql-ws, SSE and GNS3 streams on quiet channels", async () => {
  const projectId = (await call(s.url, "POST", "/v2/projects", { name: "quiet" })).body.project_id;
  await settle();
  const base = subscribers();
  const queries = [
    `subscription { projectEvents(projectId: "${projectId}") { __typename } }`,
    `subscription { controllerEvents { __typename } }`,
    `subscription { quotaChanges(volumeId: "00000000-0000-4000-8000-000000000000") { kind } }`,
    `subscription { computeEvents { kind } }`,
    `subscription { templateEvents { __typename } }`,
  ];

  const client = createClient({ url: s.url.replace("http", "ws") + "/graphql", webSocketImpl: WebSocket });
  const sink = { next: () => {}, error: () => {}, complete: () => {} };
  const unsubscribe = queries.map((query) => client.subscribe({ query }, sink));
  await until(() => subscribers() === base + queries.length);
  expect(subscribers()).toBe(base + queries.length);
  for (const u of unsubscribe) u();
  await until(() => subscribers() === base);
  expect(subscribers()).toBe(base);
  await client.dispose();

  const sse = new AbortController();
  await fetch(`${s.url}/graphql?query=${encodeURIComponent(queries[0])}`, { headers: { accept: "text/event-stream" }, signal: sse.signal });
  await until(() => subscribers() === base + 1);
  expect(subscribers()).toBe(base + 1);
  sse.abort();
  await until(() => subscribers() === base);
  expect(subscribers()).toBe(base);

  const ws = new WebSocket(s.url.replace("http", "ws") + `/v2/projects/${projectId}/notifications/ws`);
  await new Promise((r) => ws.once("open", r));
  await until(() => subscribers() === base + 1);
  ws.terminate();
  await until(() => subscribers() === base);
  expect(subscribers()).toBe(base);
});
