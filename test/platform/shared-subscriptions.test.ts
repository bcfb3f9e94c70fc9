import type { Client } from "graphql-ws";
import { describe, expect, it } from "vitest";
import { call, graphqlWsClient, serverWithGraphqlClient, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";

/**
 * Clients of the same live stream (same document and variables, no replay) share one execution: one event-bus
 * subscriber however many clients, each client still receives every event, and the stream lives until its last
 * client leaves, whichever started it. A replay (`after`) is the asking client's own.
 */
describe("shared GraphQL subscriptions", () => {
  let s: TestServer;
  let first: Client;
  serverWithGraphqlClient((server, client) => ((s = server), (first = client)));

  const subscribers = () => s.ctx.bus.subscriberCount();
  const EVENTS = `subscription($p: ID!) { projectEvents(projectId: $p) { ... on SubscriptionProjectEventsSuccess { data { cursor ... on NodeEvent { node { name } } } } } }`;

  /** A subscription collecting node names; `stop` unsubscribes. */
  function follow(client: Client, projectId: string, after?: string) {
    const names: string[] = [];
    const cursors: string[] = [];
    const stop = client.subscribe<any>(
      { query: EVENTS.replace("projectEvents(projectId: $p)", `projectEvents(projectId: $p${after ? `, after: "${after}"` : ""})`), variables: { p: projectId } },
      {
        next: (m) => {
          const data = m.data?.projectEvents?.data;
          if (data?.node) names.push(data.node.name);
          if (data?.cursor) cursors.push(data.cursor);
        },
        error: () => {},
        complete: () => {},
      },
    );
    return { names, cursors, stop };
  }

  const addNode = (projectId: string, name: string) => call(s.url, "POST", `/v2/projects/${projectId}/nodes`, { name, node_type: "vpcs", compute_id: "local" });

  it("runs one execution for many clients, and it outlives the client that started it", async () => {
    const projectId = (await call(s.url, "POST", "/v2/projects", { name: "shared" })).body.project_id;
    const base = subscribers();
    const others = [graphqlWsClient(s), graphqlWsClient(s)];
    try {
      const a = follow(first, projectId);
      await waitFor(() => subscribers() === base + 1, 10_000, "the first client's subscriber");
      const b = follow(others[0], projectId);
      const c = follow(others[1], projectId);
      // SSE, the other transport, joins the same execution.
      const sse = new AbortController();
      const sseUrl = `${s.url}/graphql?query=${encodeURIComponent(EVENTS)}&variables=${encodeURIComponent(JSON.stringify({ p: projectId }))}`;
      const sseBody = await fetch(sseUrl, { headers: { accept: "text/event-stream" }, signal: sse.signal });
      let sseText = "";
      const reading = (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of sseBody.body!) sseText += decoder.decode(chunk as Uint8Array);
      })().catch(() => {});

      // Nothing says when a join is in but an event reaching it: keep creating nodes until each client has one.
      for (let i = 0; ![b, c].every((x) => x.names.length) || !sseText.includes("warm"); i++) {
        if (i === 100) throw new Error("the clients did not all join");
        await addNode(projectId, `warm${i}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(subscribers(), "one bus subscriber for four clients").toBe(base + 1);
      await addNode(projectId, "PC2");
      await waitFor(() => [a, b, c].every((x) => x.names.includes("PC2")) && sseText.includes("PC2"), 10_000, "PC2 everywhere");

      // The client that started the execution leaves: the others keep receiving.
      a.stop();
      await addNode(projectId, "PC3");
      await waitFor(() => [b, c].every((x) => x.names.includes("PC3")) && sseText.includes("PC3"), 10_000, "PC3 after the first left");
      expect(a.names).not.toContain("PC3");
      expect(subscribers()).toBe(base + 1);
      expect(b.cursors, "the same events, in the same order").toEqual(c.cursors);

      // A replay is not shared: its own subscriber, and it starts after its cursor.
      const replay = follow(others[0], projectId, b.cursors[0]);
      await waitFor(() => subscribers() === base + 2, 10_000, "the replay's own subscriber");
      await waitFor(() => replay.names.includes("PC3"), 10_000, "the replay");
      expect(replay.cursors[0]).toBe(b.cursors[1]);
      replay.stop();

      // The last clients leave: the execution ends and its subscriber is released.
      b.stop();
      c.stop();
      sse.abort();
      await reading;
      await waitFor(() => subscribers() === base, 10_000, "every subscriber released");
    } finally {
      await Promise.all(others.map((o) => o.dispose()));
    }
  });

  it("gives a client joining after the others only what comes from then on, like a new subscription", async () => {
    const projectId = (await call(s.url, "POST", "/v2/projects", { name: "late" })).body.project_id;
    const base = subscribers();
    const early = follow(first, projectId);
    await waitFor(() => subscribers() === base + 1, 10_000, "the early subscriber");
    await addNode(projectId, "before");
    await waitFor(() => early.names.includes("before"), 10_000, "the early client's event");
    const late = follow(first, projectId);
    // Nothing tells when the late join is in but an event reaching it: keep adding until one does.
    for (let i = 0; late.names.length === 0 && i < 50; i++) {
      await addNode(projectId, `after${i}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(late.names.length).toBeGreaterThan(0);
    expect(late.names).not.toContain("before");
    expect(early.names.slice(-late.names.length)).toEqual(late.names);
    early.stop();
    late.stop();
    await waitFor(() => subscribers() === base, 10_000, "released");
  });
});
