import dgram from "node:dgram";
import fs from "node:fs";
import http from "node:http";
import type { Client } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FEED_RING } from "../../src/emulation/runtime/packet-feed.js";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { PacketFeed } from "../support/bundle.js";
import { redisUp, useInstancePair } from "../support/redis.js";
import { call, graphqlWsClient, startTestServer, type TestServer } from "../support/server.js";
import { step } from "../support/steps.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 13, packets live: the `linkPackets` subscription on a real capture, over graphql-ws and SSE — a vpcs ping
 * across a link decoded as it happens, resumed after a reconnect, its typed errors, and a reader too slow for a
 * flood whose backlog stays bounded while it is told how many packets it missed.
 */
const PACKETS = `subscription($l: ID!, $after: String) { linkPackets(id: $l, after: $after) {
  __typename
  ... on LinkPacket { cursor number dropped time capturedLengthBytes lengthBytes
    ethernet { src dst etherType vlan } arp { operation senderMac senderIp targetMac targetIp }
    ipv4 { protocol src dst ttl } icmp { type code } tcp { srcPort dstPort flags } udp { srcPort dstPort } }
  ... on Error { message } } }`;

interface Stream {
  items: any[];
  completed: () => boolean;
  close: () => void;
}

/** A linkPackets subscription over graphql-ws; `items` are the `linkPackets` results as they arrive. */
function overWs(client: Client, variables: Record<string, unknown>): Stream {
  const items: any[] = [];
  let completed = false;
  const close = client.subscribe(
    { query: PACKETS, variables },
    { next: (v) => items.push(v.errors ?? (v.data as any).linkPackets), error: (e) => items.push({ error: e }), complete: () => (completed = true) },
  );
  return { items, completed: () => completed, close };
}

/** `next` payloads of a GraphQL SSE response body, as they come. */
async function* sseNext(body: AsyncIterable<Uint8Array>): AsyncGenerator<any> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const record = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = /^data: (.*)$/m.exec(record)?.[1];
      if (/^event: next$/m.test(record) && data) yield JSON.parse(data);
    }
  }
}

const sseUrl = (s: TestServer, variables: Record<string, unknown>) =>
  `${s.url}/graphql?query=${encodeURIComponent(PACKETS)}&variables=${encodeURIComponent(JSON.stringify(variables))}`;

/** The same subscription over SSE (GET /graphql, Accept: text/event-stream). */
function overSse(s: TestServer, variables: Record<string, unknown>): Stream {
  const items: any[] = [];
  let completed = false;
  const ctrl = new AbortController();
  void (async () => {
    const res = await fetch(sseUrl(s, variables), { headers: { accept: "text/event-stream" }, signal: ctrl.signal });
    for await (const r of sseNext(res.body as unknown as AsyncIterable<Uint8Array>)) items.push(r.errors ?? r.data.linkPackets);
    completed = true;
  })().catch(() => {});
  return { items, completed: () => completed, close: () => ctrl.abort() };
}

/** The readers of link `linkId`'s packet feed: subscriptions whose start position is fixed. */
const feedReaders = (s: TestServer, linkId: string) => PacketFeed.of(s.ctx.services.emulation.runtime.capture(linkId)!).stats().readers;

const packets = (st: Stream) => st.items.filter((i) => i.__typename === "LinkPacket");

/**
 * Open linkPackets subscriptions, as /metrics counts them. Counted is not yet reading: Pothos runs the subscribe
 * resolver, which fixes the stream's start in the feed, at the stream's first pull; a stream has its start once its
 * feed counts it as a reader (`feedReaders`).
 */
async function openPacketStreams(s: TestServer): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  return Number(/^patchbay_open_streams\{kind="graphql:linkPackets"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

async function newProject(s: TestServer, name: string): Promise<string> {
  const r = await call(s.url, "POST", "/v2/projects", { name: `${name}-${Date.now()}`, auto_close: false });
  expect(r.status).toBe(201);
  return r.body.project_id;
}

async function node(s: TestServer, projectId: string, name: string, node_type: string): Promise<string> {
  const r = await call(s.url, "POST", `/v2/projects/${projectId}/nodes`, { name, node_type, compute_id: "local" });
  expect(r.status).toBe(201);
  return r.body.node_id;
}

async function link(s: TestServer, projectId: string, a: string, b: string): Promise<string> {
  const ends = [a, b].map((node_id) => ({ node_id, adapter_number: 0, port_number: 0 }));
  const r = await call(s.url, "POST", `/v2/projects/${projectId}/links`, { nodes: ends });
  expect(r.status).toBe(201);
  return r.body.link_id;
}

describe("linkPackets", () => {
  let s: TestServer;
  let client: Client;

  beforeAll(async () => {
    s = await startTestServer();
    client = graphqlWsClient(s);
  });
  afterAll(async () => {
    await client?.dispose();
    await s?.close();
  });

  it("answers typed errors: unknown link, no capture running, a cursor that is not one", async () => {
    const P = await newProject(s, "errors");
    const L = await link(s, P, await node(s, P, "SW1", "ethernet_switch"), await node(s, P, "HUB1", "ethernet_hub"));
    const first = async (variables: Record<string, unknown>) => {
      const st = overWs(client, variables);
      await waitFor(() => st.completed(), 10_000, "the subscription to end");
      return st.items;
    };
    expect(await first({ l: "00000000-0000-4000-8000-000000000000" })).toEqual([
      { __typename: "NotFoundError", message: "Link ID 00000000-0000-4000-8000-000000000000 doesn't exist" },
    ]);
    expect(await first({ l: L })).toEqual([{ __typename: "ConflictError", message: "This link has no active packet capture" }]);
    expect((await call(s.url, "POST", `/v2/projects/${P}/links/${L}/start_capture`, {})).status).toBe(201);
    expect(await first({ l: L, after: "../etc" })).toEqual([{ __typename: "InvalidInputError", message: "../etc is not a packet cursor" }]);
    expect((await call(s.url, "POST", `/v2/projects/${P}/links/${L}/stop_capture`)).status).toBe(201);
  });

  it("a subscriber leaving a quiet capture is released at once (graphql-ws and SSE)", async () => {
    const P = await newProject(s, "quiet");
    const L = await link(s, P, await node(s, P, "SW1", "ethernet_switch"), await node(s, P, "HUB1", "ethernet_hub"));
    expect((await call(s.url, "POST", `/v2/projects/${P}/links/${L}/start_capture`, {})).status).toBe(201);
    const feed = PacketFeed.of(s.ctx.services.emulation.runtime.capture(L)!);
    const before = await openPacketStreams(s);
    const streams = [overWs(client, { l: L }), overSse(s, { l: L })];
    await waitFor(async () => (await openPacketStreams(s)) === before + 2 && feed.stats().readers === 2, 10_000, "two readers");
    for (const st of streams) st.close();
    // No packet will come to wake them: only the end of the operation can.
    await waitFor(async () => (await openPacketStreams(s)) === before && feed.stats().readers === 0, 10_000, "the readers to be released");
    expect((await call(s.url, "POST", `/v2/projects/${P}/links/${L}/stop_capture`)).status).toBe(201);
  });

  it("a reader too slow for a flood keeps a bounded backlog, skips the oldest and counts them in `dropped`", async () => {
    // Two always-running devices: the link carries what the test sends into the relay, as a node would.
    const P = await newProject(s, "flood");
    const SW = await node(s, P, "SW1", "ethernet_switch");
    const L = await link(s, P, SW, await node(s, P, "HUB1", "ethernet_hub"));
    const capture = await call(s.url, "POST", `/v2/projects/${P}/links/${L}/start_capture`, {});
    expect(capture.status).toBe(201);

    // An SSE client that does not read: once the socket buffers are full, the server cannot send more.
    const before = await openPacketStreams(s);
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(sseUrl(s, { l: L }), { headers: { accept: "text/event-stream" } }, resolve).on("error", reject),
    );
    await waitFor(async () => (await openPacketStreams(s)) > before && feedReaders(s, L) === 1, 10_000, "the SSE subscription reading");

    const relay = s.ctx.services.emulation.runtime.snapshot().attachments.find((a) => a.port === `${SW}/0/0`)!.peer;
    const feed = PacketFeed.of(s.ctx.services.emulation.runtime.capture(L)!);
    const sender = dgram.createSocket("udp4");
    const frame = Buffer.from("ffffffffffff005079666800080600010800060400010050796668000a000001000000000000" + "0a000002", "hex");
    let sent = 0;
    try {
      // Send until the writer has lapped the reader (it is stuck on the full socket), then a little more.
      while (feed.stats().backlog <= FEED_RING + 100) {
        for (let i = 0; i < 200; i++, sent++) sender.send(frame, relay, "127.0.0.1");
        await new Promise((r) => setTimeout(r, 5));
        expect(feed.stats().retained).toBeLessThanOrEqual(FEED_RING);
        expect(sent, "the reader was never lapped: is the transport buffering without limit?").toBeLessThan(300_000);
      }
    } finally {
      sender.close();
    }
    const stop = await call(s.url, "POST", `/v2/projects/${P}/links/${L}/stop_capture`);
    const recorded = parsePcap(fs.readFileSync(stop.body.capture_file_path)).packets.length;

    // Now read everything: the stream ends after the rest, since the capture stopped.
    const got: { number: number; dropped: number }[] = [];
    for await (const r of sseNext(res)) got.push({ number: r.data.linkPackets.number, dropped: r.data.linkPackets.dropped });
    expect(got.length).toBeGreaterThan(0);
    expect(got.at(-1)!.number).toBe(recorded);
    const dropped = got.reduce((n, p) => n + p.dropped, 0);
    expect(dropped).toBeGreaterThan(0);
    expect(got.length + dropped).toBe(recorded); // every packet of the capture: received once, or counted
    got.forEach((p, i) => expect(p.dropped).toBe(p.number - (i ? got[i - 1].number : 0) - 1));
    expect(got.length).toBeLessThan(recorded);
    await waitFor(async () => (await openPacketStreams(s)) === before, 10_000, "the stream to be released");
  }, 120_000);

  describe.skipIf(!toolAvailable("vpcs", findVpcs() !== null))("on a vpcs ping (requires the vpcs package)", () => {
    let P: string;
    let L: string;
    let consoles: TelnetClient[] = [];
    const macs: string[] = [];
    afterAll(() => consoles.forEach((c) => c.close()));

    it("streams the ARP and ICMP echo of a ping over graphql-ws and SSE, resumes after a cursor, ends with the capture", async () => {
      await step("PC1 — PC2 started with addresses, a capture on their link", async () => {
        P = await newProject(s, "ping");
        const pcs = [await node(s, P, "PC1", "vpcs"), await node(s, P, "PC2", "vpcs")];
        L = await link(s, P, pcs[0], pcs[1]);
        expect((await call(s.url, "POST", `/v2/projects/${P}/nodes/start`)).status).toBe(204);
        for (const [i, id] of pcs.entries()) {
          const c = await TelnetClient.connect((await call(s.url, "GET", `/v2/projects/${P}/nodes/${id}`)).body.console);
          consoles.push(c);
          await c.waitFor(/VPCS> $/);
          await c.run(`ip 10.0.0.${i + 1}/24`);
          macs.push(/MAC\s*:\s*([0-9a-f:]{17})/.exec(await c.run("show ip"))![1]);
        }
        expect((await call(s.url, "POST", `/v2/projects/${P}/links/${L}/start_capture`, {})).status).toBe(201);
      });

      const ws = overWs(client, { l: L });
      const sse = overSse(s, { l: L });
      await waitFor(async () => (await openPacketStreams(s)) >= 2 && feedReaders(s, L) === 2, 10_000, "both subscriptions reading");

      const echo = (st: Stream, type: number) => packets(st).find((p) => p.icmp?.type === type);
      await step("PC1 pings PC2: both transports deliver the same decoded packets", async () => {
        expect((await consoles[0].run("ping 10.0.0.2 -c 2", 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
        for (const st of [ws, sse]) await waitFor(() => packets(st).filter((p) => p.icmp?.type === 0).length === 2, 10_000, "two echo replies");
        for (const st of [ws, sse]) {
          expect(echo(st, 8)).toMatchObject({
            dropped: 0,
            ethernet: { src: macs[0], dst: macs[1], etherType: 0x0800, vlan: null },
            ipv4: { protocol: 1, src: "10.0.0.1", dst: "10.0.0.2", ttl: 64 },
            icmp: { type: 8, code: 0 },
            arp: null,
            tcp: null,
            udp: null,
          });
          expect(echo(st, 0)).toMatchObject({
            ethernet: { src: macs[1], dst: macs[0], etherType: 0x0800 },
            ipv4: { protocol: 1, src: "10.0.0.2", dst: "10.0.0.1" },
            icmp: { type: 0, code: 0 },
          });
          expect(echo(st, 8).capturedLengthBytes).toBe(echo(st, 8).lengthBytes);
          expect(Math.abs(Date.parse(echo(st, 8).time) - Date.now())).toBeLessThan(60_000);
          expect(packets(st)).toContainEqual(
            expect.objectContaining({ arp: { operation: 2, senderMac: macs[1], senderIp: "10.0.0.2", targetMac: macs[0], targetIp: "10.0.0.1" } }),
          );
          const numbers = packets(st).map((p) => p.number);
          expect(numbers).toEqual(numbers.map((_, i) => numbers[0] + i)); // consecutive: nothing dropped
        }
        // Each stream starts when its subscription is made (vpcs may send between the two); then they are the same.
        const from = Math.max(packets(ws)[0].number, packets(sse)[0].number);
        const since = (st: Stream) => packets(st).filter((p) => p.number >= from).map((p) => p.cursor);
        expect(since(sse)).toEqual(since(ws));
      });

      await step("the packets are those of the pcap file, in its order", async () => {
        const file = (await call(s.url, "GET", `/v2/projects/${P}/links/${L}`)).body.capture_file_path;
        const recorded = parsePcap(fs.readFileSync(file)).packets;
        const mac = (b: Buffer) => [...b].map((x) => x.toString(16).padStart(2, "0")).join(":");
        for (const p of packets(ws)) {
          const frame = recorded[p.number - 1].data;
          expect([frame.length, mac(frame.subarray(6, 12)), mac(frame.subarray(0, 6))]).toEqual([p.capturedLengthBytes, p.ethernet.src, p.ethernet.dst]);
        }
      });

      await step("a reconnect with `after` gets what it missed, then live packets", async () => {
        ws.close();
        const last = packets(ws).at(-1);
        expect((await consoles[0].run("ping 10.0.0.2 -c 1", 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(1);
        const resumed = overWs(client, { l: L, after: last.cursor });
        await waitFor(() => echo(resumed, 0), 10_000, "the missed echo reply");
        expect(packets(resumed)[0]).toMatchObject({ number: last.number + 1, dropped: 0 });

        await step("stopping the capture ends every stream", async () => {
          expect((await call(s.url, "POST", `/v2/projects/${P}/links/${L}/stop_capture`)).status).toBe(201);
          await waitFor(() => resumed.completed() && sse.completed(), 10_000, "both streams to complete");
          expect(resumed.items.every((i) => i.__typename === "LinkPacket")).toBe(true);
          // What the resumed stream got is exactly what the SSE stream, connected all along, got after the cursor.
          expect(packets(resumed).map((p) => p.cursor)).toEqual(packets(sse).filter((p) => p.number > last.number).map((p) => p.cursor));
          await waitFor(async () => (await openPacketStreams(s)) === 0, 10_000, "the streams to be released");
        });
      });
    }, 90_000);
  });
});

describe.skipIf(!redisUp)("linkPackets with Redis: the capture runs on one instance (requires Redis)", () => {
  const pair = useInstancePair();

  it("another instance answers a ConflictError naming the instance that runs it, over GraphQL and for GET L/pcap", async () => {
    const { a, b } = pair;
    const P = await newProject(a, "two-instances");
    const L = await link(a, P, await node(a, P, "SW1", "ethernet_switch"), await node(a, P, "HUB1", "ethernet_hub"));
    expect((await call(a.url, "POST", `/v2/projects/${P}/links/${L}/start_capture`, {})).status).toBe(201);
    const message = `The packet capture of this link runs on instance ${a.ctx.config.instanceId}: read it there`;
    const client = graphqlWsClient(b);
    try {
      const st = overWs(client, { l: L });
      await waitFor(() => st.completed(), 10_000, "the subscription to end");
      expect(st.items).toEqual([{ __typename: "ConflictError", message }]);
    } finally {
      await client.dispose();
    }
    expect((await call(b.url, "GET", `/v2/projects/${P}/links/${L}/pcap`)).body).toMatchObject({ status: 409, message });
    expect((await call(a.url, "POST", `/v2/projects/${P}/links/${L}/stop_capture`)).status).toBe(201);
  });
});
