import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Writable } from "node:stream";
import * as wsModule from "ws";
import WebSocket from "ws";
import { beforeStreamWrite } from "../../src/platform/http/coalesced-writes.js";
import { webSocketTextFrame } from "../../src/platform/http/stream-frames.js";
import { ndjsonStream } from "../emulation/nodes-support.js";
import { projectDir, publishTopologyEvent } from "../support/bundle.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";

/**
 * The write paths of the streams under load (src/platform/http/coalesced-writes.ts, stream-frames.ts, the GNS3
 * stream hubs and the direct writes of shared GraphQL subscriptions): a burst of events reaches every transport
 * complete and in order, the bytes written directly are the bytes of the normal path, and the streams of one scope
 * share one bus subscription.
 */
let s: TestServer;
beforeAll(async () => void (s = await startTestServer()));
afterAll(() => s.close());

const wsBase = () => s.url.replace(/^http/, "ws");
const subscribers = () => s.ctx.bus.subscriberCount();
const EVENTS = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { ... on SubscriptionProjectEventsSuccess { data { cursor ... on NodeEvent { node { name x } } } } } }`;

async function projectWithNode(name: string) {
  const project = (await call(s.url, "POST", "/v2/projects", { name })).body;
  const node = (await call(s.url, "POST", `/v2/projects/${project.project_id}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body;
  return { projectId: project.project_id as string, nodeId: node.node_id as string };
}

/** Publishes node.updated events with x = 1…n in one go, as the node operations do (n events in one turn). */
async function burst(projectId: string, nodeId: string, n: number) {
  const project = await s.ctx.db.project.findUniqueOrThrow({ where: { id: projectId } });
  const node = await s.ctx.db.node.findUniqueOrThrow({ where: { id: nodeId } });
  const dir = projectDir(s.ctx, project);
  await Promise.all(Array.from({ length: n }, (_, i) => publishTopologyEvent(s.ctx, projectId, { type: "node.updated", node: { ...node, x: i + 1 }, projectDir: dir, changed: ["x"] })));
}

/** A raw graphql-transport-ws connection collecting the text of every message after the ack. */
async function graphqlWs(projectId: string, after?: string) {
  const ws = new WebSocket(`${wsBase()}/graphql`, "graphql-transport-ws");
  const texts: string[] = [];
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  ws.send(JSON.stringify({ type: "connection_init" }));
  await new Promise<void>((resolve) => ws.once("message", () => resolve()));
  ws.on("message", (data) => texts.push(String(data)));
  ws.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: EVENTS, variables: { p: projectId, after: after ?? null } } }));
  return { ws, texts, xs: () => texts.map((t) => JSON.parse(t).payload?.data?.projectEvents?.data?.node?.x).filter((x) => x !== undefined) };
}

/** An SSE subscription collecting its `event: next` blocks as sent. */
function sse(projectId: string, after?: string) {
  const blocks: string[] = [];
  const abort = new AbortController();
  const url = `${s.url}/graphql?query=${encodeURIComponent(EVENTS)}&variables=${encodeURIComponent(JSON.stringify({ p: projectId, after: after ?? null }))}`;
  void fetch(url, { headers: { accept: "text/event-stream" }, signal: abort.signal })
    .then(async (res) => {
      const decoder = new TextDecoder();
      let text = "";
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = text.indexOf("\n\n")) >= 0) {
          if (text.startsWith("event: next")) blocks.push(text.slice(0, end + 2));
          text = text.slice(end + 2);
        }
      }
    })
    .catch(() => {});
  const xs = () => blocks.map((b) => JSON.parse(b.split("\n")[1].slice(6)).data?.projectEvents?.data?.node?.x).filter((x) => x !== undefined);
  return { blocks, xs, close: () => abort.abort() };
}

/** Nothing tells when an SSE request has joined the execution but an event reaching it: publish until one does. */
async function untilJoined(events: ReturnType<typeof sse>, projectId: string, nodeId: string) {
  for (let i = 0; events.blocks.length === 0; i++) {
    if (i === 50) throw new Error("the SSE client did not join");
    await burst(projectId, nodeId, 1);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("streams under load", () => {
  it("delivers a burst complete and in order over all four transports, the GNS3 streams of a project on one bus subscription", async () => {
    const { projectId, nodeId } = await projectWithNode("burst");
    const base = subscribers();
    const gns3Ws = [0, 1].map(() => new WebSocket(`${wsBase()}/v2/projects/${projectId}/notifications/ws`));
    const gns3Texts = gns3Ws.map((ws) => {
      const texts: string[] = [];
      ws.on("message", (data) => texts.push(String(data)));
      return texts;
    });
    await Promise.all(gns3Ws.map((ws) => new Promise((resolve) => ws.once("open", resolve))));
    const http = ndjsonStream(`${s.url}/v2/projects/${projectId}/notifications`);
    await http.ready;
    await waitFor(() => gns3Texts.every((t) => t.length) && http.lines.length > 0, 5000, "the first pings");
    expect(subscribers(), "three GNS3 streams of one project, one bus subscription").toBe(base + 1);

    const gql = await graphqlWs(projectId);
    const events = sse(projectId);
    await waitFor(() => subscribers() === base + 2, 5000, "the GraphQL stream's subscription");
    await untilJoined(events, projectId, nodeId);
    const skip = { gns3: gns3Texts.map((t) => t.length), http: http.lines.length, gql: gql.xs().length, sse: events.xs().length };

    const N = 300;
    await burst(projectId, nodeId, N);
    const expected = Array.from({ length: N }, (_, i) => i + 1);
    const gns3Xs = (texts: string[]) => texts.map((t) => JSON.parse(t)).filter((m) => m.action === "node.updated").map((m) => m.event.x);
    await waitFor(
      () => gql.xs().length - skip.gql >= N && events.xs().length - skip.sse >= N && http.lines.length - skip.http >= N && gns3Texts.every((t, i) => t.length - skip.gns3[i] >= N),
      10_000,
      "the burst everywhere",
    );
    for (const [i, texts] of gns3Texts.entries()) expect(gns3Xs(texts.slice(skip.gns3[i]))).toEqual(expected);
    expect(gns3Xs(http.lines.slice(skip.http))).toEqual(expected);
    expect(gql.xs().slice(skip.gql)).toEqual(expected);
    expect(events.xs().slice(skip.sse)).toEqual(expected);

    for (const ws of gns3Ws) ws.close();
    http.close();
    gql.ws.close();
    events.close();
    await waitFor(() => subscribers() === base, 5000, "every subscription released");
  });

  it("writes a shared subscription's results with the bytes graphql-ws and Yoga's SSE send", async () => {
    const { projectId, nodeId } = await projectWithNode("bytes");
    const base = subscribers();
    const live = await graphqlWs(projectId);
    const liveSse = sse(projectId);
    await waitFor(() => subscribers() === base + 1, 5000, "the shared execution");
    await untilJoined(liveSse, projectId, nodeId);
    await waitFor(() => live.texts.length > 0, 5000, "the first event over graphql-ws");
    // A replay from the first event is the client's own execution, through Yoga's and graphql-ws' own serializers.
    const cursor = JSON.parse(live.texts[0]).payload.data.projectEvents.data.cursor;
    const replayed = await graphqlWs(projectId, cursor);
    const replayedSse = sse(projectId, cursor);
    await waitFor(() => subscribers() === base + 3, 5000, "the replays' own subscriptions");
    await burst(projectId, nodeId, 5);
    const last = (texts: string[]) => texts.filter((t) => t.includes('"x":5,') || t.includes('"x":5}'));
    await waitFor(() => [live.texts, replayed.texts, liveSse.blocks, replayedSse.blocks].every((t) => last(t).length > 0), 5000, "x = 5 everywhere");
    expect(last(live.texts)).toEqual(last(replayed.texts));
    expect(last(liveSse.blocks)).toEqual(last(replayedSse.blocks));
    expect(last(liveSse.blocks)[0]).toMatch(/^event: next\ndata: \{"data":\{"projectEvents":/);

    for (const c of [live, replayed]) c.ws.close();
    for (const c of [liveSse, replayedSse]) c.close();
    await waitFor(() => subscribers() === base, 5000, "released");
  });

  it("cuts a GNS3 stream whose client stopped reading once its unsent bytes pass the limit, and serves the others", async () => {
    const { projectId, nodeId } = await projectWithNode("stalled");
    const openStreams = async () =>
      Number(/^patchbay_open_streams\{kind="gns3:project"\} (\d+)/m.exec((await call(s.url, "GET", "/metrics")).text)?.[1] ?? 0);
    const before = await openStreams();
    const reader = new WebSocket(`${wsBase()}/v2/projects/${projectId}/notifications/ws`);
    let read = 0;
    reader.on("message", () => read++);
    await new Promise((resolve) => reader.once("open", resolve));
    // A client that asks for the stream and never reads it.
    const stalled = net.connect(s.port);
    stalled.on("error", () => {});
    await new Promise((resolve) => stalled.once("connect", resolve));
    stalled.write(`GET /v2/projects/${projectId}/notifications HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    stalled.pause();
    await waitFor(async () => (await openStreams()) === before + 2, 5000, "both streams open");

    let published = 0;
    while ((await openStreams()) === before + 2) {
      if (published >= 60_000) throw new Error(`the stalled stream was not cut after ${published} events`);
      await burst(projectId, nodeId, 2000);
      published += 2000;
      // The reading client shares this process's event loop with the publisher: let it read each burst, or on a
      // busy machine it lags as far as the stalled one and is rightly cut too.
      if ((await openStreams()) === before + 2) await waitFor(() => read >= published, 10_000, "the reading client to keep up");
    }
    // ~16 MB unsent plus what the kernel buffers, at ~1.3 KB per event.
    expect(published).toBeGreaterThanOrEqual(10_000);
    expect(await openStreams()).toBe(before + 1);
    await waitFor(() => read >= published, 10_000, "every event to the client that reads");
    reader.close();
    stalled.destroy();
  });

  it("streams GNS3 notifications to an HTTP/1.0 client unchunked, until the connection closes", async () => {
    const { projectId, nodeId } = await projectWithNode("http10");
    const socket = net.connect(s.port);
    let text = "";
    socket.on("data", (d) => (text += d.toString()));
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(`GET /v2/projects/${projectId}/notifications HTTP/1.0\r\nHost: localhost\r\n\r\n`);
    await waitFor(() => text.includes('"action": "ping"'), 5000, "the first ping");
    await burst(projectId, nodeId, 3);
    await waitFor(() => (text.match(/node\.updated/g) ?? []).length === 3, 5000, "three events");
    const [head, body] = text.split("\r\n\r\n");
    expect(head).not.toMatch(/transfer-encoding/i);
    const lines = body.split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).map((l) => JSON.parse(l).action)).toEqual(["ping", "node.updated", "node.updated", "node.updated"]);
    socket.destroy();
  });
});

describe("write coalescing", () => {
  it("writes a socket's first message of a period at once, holds the next ones, and sends them in order when the period ends", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const received: string[] = [];
    const client = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
    client.on("data", (d) => received.push(d.toString()));
    const [socket] = await new Promise<[net.Socket]>((resolve) => server.once("connection", (c) => resolve([c])));
    try {
      // A new stream socket: its first write goes out at once, the next two (microseconds later) are in its period.
      beforeStreamWrite(socket);
      socket.write("1;");
      expect(socket.writableCorked, "the first write goes out at once").toBe(0);
      beforeStreamWrite(socket);
      socket.write("2;");
      beforeStreamWrite(socket);
      socket.write("3;");
      expect(socket.writableCorked, "later ones are held").toBe(1);
      await waitFor(() => received.join("") === "1;2;3;", 5000, "all three");
      expect(socket.writableCorked).toBe(0);
    } finally {
      client.destroy();
      socket.destroy();
      server.close();
    }
  });
});

describe("stream frames", () => {
  it("makes WebSocket text frames that ws's own reader takes, for each of the three length forms", () => {
    for (const n of [0, 125, 126, 65_535, 65_536, 200_000]) {
      // ws's frame parser (exported by the module, not in its type declarations).
      const Receiver = (wsModule as unknown as { Receiver: new (options: object) => Writable }).Receiver;
      const reader = new Receiver({ isServer: false });
      const messages: { text: string; binary: boolean }[] = [];
      reader.on("message", (data: Buffer, binary: boolean) => messages.push({ text: data.toString(), binary }));
      const text = "é".repeat(n >> 1) + "x".repeat(n & 1); // n bytes of UTF-8
      reader.write(webSocketTextFrame(Buffer.from(text)));
      expect(messages, `a ${n}-byte message`).toEqual([{ text, binary: false }]);
    }
  });
});
