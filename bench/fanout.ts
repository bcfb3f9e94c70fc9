/**
 * Event fan-out benchmark (run: `npm run bench:fanout`).
 *
 * 1,000 subscribers of one project's events, mixed evenly over the four ways clients listen: the GNS3 notification
 * WebSocket, the GNS3 HTTP notification stream, GraphQL `projectEvents` over graphql-ws and over SSE (each on its
 * own connection). The server publishes node.updated events of a real node on the bus at a fixed rate, the way
 * the node operations do (publishTopologyEvent, the node's x carrying the sequence number), and each subscriber
 * notes when every event arrives. Printed: latency from publish to the event being read by the client (p50/p99/max,
 * all subscribers, per transport), and events lost (each subscriber must see every sequence number once; the run
 * waits for late events until every subscriber has all of them or none arrived for 5 s), the p99 of each second's
 * events (where the tail is), the server's CPU time while publishing (per delivery), and the server process's memory
 * (VmRSS before any subscriber, with all of them connected and once every event was delivered, each after a full GC
 * and 5 s idle, its peak VmHWM, and the difference per subscriber). The write path is measured elsewhere
 * (bench/emulation.ts): here the bus and the four transports are. Subscribers are lean raw-socket clients
 * (bench/stream-client.ts) in two child processes; the server runs in a third, all on the same 2 cores: the bundle
 * production runs (dist/patchbay.cjs), under the bench's tsx loader (the role code is TypeScript), which the
 * absolute memory includes and the per-subscriber figure does not.
 *
 * Env: BENCH_DATABASE_URL=postgres://… (default: SQLite), BENCH_SUBSCRIBERS (1000), BENCH_RATE (events/s, 100),
 * BENCH_DURATION (s, 10; after BENCH_WARMUP, 2 s of events left out of the latencies), BENCH_KINDS (a
 * comma-separated subset of the four), BENCH_CPU_PROF=dir (CPU profiles of the children).
 *
 * The floor, in the same run: a bare node:http server and a bare ws server in one process sending the same GNS3 lines
 * (the node's JSON, made once per event) to the same number of subscribers, half over WebSocket, half over a chunked
 * HTTP stream, each message written to each socket as it comes (res.write, ws.send): no bus, no routing, no
 * per-subscriber work beyond the write, and no coalescing of writes. Its latencies, CPU and memory per subscriber
 * are printed next to Patchbay's, with the ratios.
 */
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import WebSocket, { WebSocketServer } from "ws";
import { clientTextFrame, openRecordedStream, type RecordedStream } from "./stream-client.js";
import { ask, benchRun, CHILD_EXEC_ARGV, collectOnRequest, DURATION_S, memory, PATCHBAY_ROLE, patchbayLibrary, printRows, request, requestJson, servePatchbay, startChild, WARMUP_S } from "./harness.js";
import type { RunningServer } from "../src/server.js";

const SELF = fileURLToPath(import.meta.url);
const SUBSCRIBER_ROLE = "--subscribers";
const BARE_FANOUT_ROLE = "--serve-bare-fanout";
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const ALL_KINDS = ["gns3-ws", "gns3-http", "graphql-ws", "sse"] as const;
type Kind = (typeof ALL_KINDS)[number];
/** BENCH_KINDS=gns3-http,sse: only these transports (to see one transport's cost); all four by default. */
const KINDS = (process.env.BENCH_KINDS?.split(",") ?? ALL_KINDS) as readonly Kind[];

const now = () => performance.timeOrigin + performance.now(); // one clock across processes
const GQL = `subscription($p: ID!) { projectEvents(projectId: $p) { ... on SubscriptionProjectEventsSuccess { data { action ... on NodeEvent { node { id x } } } } } }`;

/** Calls `publish(seq)` for seq = 1…total at `rate` per second; returns the publish times, indexed by seq. */
async function paced(rate: number, total: number, publish: (seq: number) => unknown): Promise<{ sent: number[]; seconds: number; cpuMs: number }> {
  const sent: number[] = [0];
  const start = now();
  const cpu = process.cpuUsage();
  for (let seq = 1; seq <= total; seq++) {
    const wait = start + (seq - 1) * (1000 / rate) - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    sent[seq] = now();
    await publish(seq);
  }
  // The publishing process's CPU time until the last event was handed over (its deliveries mostly included).
  const used = process.cpuUsage(cpu);
  return { sent, seconds: (now() - start) / 1000, cpuMs: (used.user + used.system) / 1000 };
}

/** In the server child: publishes `total` node.updated events at `rate`, then reports their publish times. */
async function publishEvents(m: any, server: RunningServer): Promise<void> {
  if (!m?.publish) return;
  // The bundle's own, as the server is: the bus is module state.
  const { publishTopologyEvent, projectDir } = await patchbayLibrary();
  const { projectId, nodeId, rate, total } = m.publish;
  const ctx = server.ctx;
  const project = await ctx.db.project.findUniqueOrThrow({ where: { id: projectId } });
  const node = await ctx.db.node.findUniqueOrThrow({ where: { id: nodeId } });
  const dir = projectDir(ctx, project);
  process.send!(
    await paced(rate, total, (seq) =>
      publishTopologyEvent(ctx, projectId, { type: "node.updated", node: { ...node, x: seq }, projectDir: dir, changed: ["x"] }),
    ),
  );
}

/** The bare floor's process: chunked HTTP streams and WebSockets on any path, and the same lines written to all. */
function serveBareFanout(): void {
  const streams = new Set<http.ServerResponse>();
  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true });
  const server = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    streams.add(res);
    req.on("close", () => streams.delete(res));
  });
  server.on("upgrade", (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
    }),
  );
  server.listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on("message", async (m: any) => {
    if (m === "count") process.send!({ count: streams.size + sockets.size });
    collectOnRequest(m);
    if (m === "stop") process.exit(0);
    if (m?.publish) {
      const { pythonJsonLine } = await import("../src/emulation/rest/json.js");
      const { node, rate, total } = m.publish;
      process.send!(
        await paced(rate, total, (seq) => {
          const line = pythonJsonLine({ action: "node.updated", event: { ...node, x: seq } });
          for (const res of streams) res.write(`${line}\n`);
          for (const ws of sockets) ws.send(line);
        }),
      );
    }
  });
}

/**
 * One subscriber: what it read, as it came off the socket (bench/stream-client.ts), decoded when asked (for progress,
 * after the publishing) into the arrival time of each sequence number. A message's arrival is the read that
 * completed it. Every message is still parsed and checked (sequence number, node, no loss, no duplicate), only
 * later: parsing 100,000 JSON messages a second as they arrived took CPU the server needed.
 */
class Arrivals {
  readonly at = new Map<number, number>();
  duplicates = 0;
  private readonly text = new StringDecoder("utf8");
  private rest = "";

  /**
   * `separator`: what ends a message in a streamed body (a GNS3 line, an SSE block), or undefined when each
   * payload is one message (WebSocket). `decode` returns a message's sequence number, or undefined for others.
   */
  constructor(
    readonly kind: Kind,
    readonly stream: RecordedStream,
    private readonly separator: string | undefined,
    private readonly decode: (message: string) => unknown,
  ) {}

  /** Decodes what was read since the last call. */
  settle(): void {
    this.stream.drain((payload, at) => {
      if (this.separator === undefined) return this.seen(this.decode(payload.toString("utf8")), at);
      this.rest += this.text.write(payload);
      let end;
      while ((end = this.rest.indexOf(this.separator)) >= 0) {
        this.seen(this.decode(this.rest.slice(0, end)), at);
        this.rest = this.rest.slice(end + this.separator.length);
      }
    });
  }

  private seen(x: unknown, at: number): void {
    if (typeof x !== "number" || x < 1) return;
    if (this.at.has(x)) this.duplicates++;
    else this.at.set(x, at);
  }
}

/** A subscriber child: opens its share of subscribers, records arrival times per sequence number. */
async function runSubscribers(port: number, projectId: string, nodeId: string, first: number, count: number, kinds: readonly Kind[]): Promise<void> {
  const gns3 = (text: string) => {
    if (!text.trim()) return undefined;
    const m = JSON.parse(text);
    return m.action === "node.updated" && m.event.node_id === nodeId ? m.event.x : undefined;
  };
  const graphqlData = (payload: any) => payload?.data?.projectEvents?.data?.node?.x;
  const graphqlWs = (text: string) => {
    const m = JSON.parse(text);
    if (m.type === "error") console.error("graphql-ws", m.payload);
    return m.type === "next" ? graphqlData(m.payload) : undefined;
  };
  const sse = (block: string) => {
    const data = block.split("\n").find((l) => l.startsWith("data:"));
    return data && data.length > 6 ? graphqlData(JSON.parse(data.slice(5))) : undefined;
  };
  // The graphql-transport-ws protocol by hand: init, the ack, then one subscription.
  const graphqlWsHandshake = (payload: Buffer, socket: import("node:net").Socket) => {
    if (JSON.parse(payload.toString()).type !== "connection_ack") return false;
    socket.write(clientTextFrame(JSON.stringify({ id: "1", type: "subscribe", payload: { query: GQL, variables: { p: projectId } } })));
    return true;
  };
  const sseQuery = `/graphql?query=${encodeURIComponent(GQL)}&variables=${encodeURIComponent(JSON.stringify({ p: projectId }))}`;
  const open = (kind: Kind): Promise<Arrivals> => {
    switch (kind) {
      case "gns3-ws":
        return openRecordedStream(port, `/v2/projects/${projectId}/notifications/ws`, "websocket").then((s) => new Arrivals(kind, s, undefined, gns3));
      case "gns3-http":
        return openRecordedStream(port, `/v2/projects/${projectId}/notifications`, "http").then((s) => new Arrivals(kind, s, "\n", gns3));
      case "graphql-ws": {
        const greeting = clientTextFrame(JSON.stringify({ type: "connection_init" }));
        const opening = openRecordedStream(port, "/graphql", "websocket", { protocol: "graphql-transport-ws", greeting, handshake: graphqlWsHandshake });
        return opening.then((s) => new Arrivals(kind, s, undefined, graphqlWs));
      }
      case "sse":
        return openRecordedStream(port, sseQuery, "http", { headers: { Accept: "text/event-stream" } }).then((s) => new Arrivals(kind, s, "\n\n", sse));
    }
  };
  const arrivals = await Promise.all(Array.from({ length: count }, (_, i) => open(kinds[(first + i) % kinds.length])));
  process.send!({ opened: count });
  process.on("message", (m: any) => {
    if (m === "progress") {
      for (const a of arrivals) a.settle();
      process.send!({ received: arrivals.reduce((n, a) => n + a.at.size, 0) });
    }
    if (m?.sent) {
      // The parent's send times, indexed by sequence number: latencies and losses per subscriber.
      const sent: number[] = m.sent;
      const report = arrivals.map((a) => {
        a.settle();
        // Indexed by sequence number - 1; NaN for an event never received.
        const latencies: number[] = [];
        let lost = 0;
        for (let seq = 1; seq < sent.length; seq++) {
          const at = a.at.get(seq);
          if (at === undefined) lost++;
          latencies.push(at === undefined ? NaN : at - sent[seq]);
        }
        return { kind: a.kind, latencies, lost, duplicates: a.duplicates };
      });
      for (const a of arrivals) a.stream.socket.destroy();
      process.send!({ report }, () => process.exit(0));
    }
  });
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

/** The server idles this long before each memory reading. */
const IDLE_MS = 5000;

/**
 * The server's VmRSS and VmHWM after a full garbage collection (what it retains) and IDLE_MS idle (V8 returns the
 * freed pages to the system in the background).
 */
async function settledMemory(server: ChildProcess): Promise<{ rss: number; hwm: number }> {
  await ask(server, "gc", "gc");
  await sleep(IDLE_MS);
  return memory(server.pid!);
}

interface Target {
  /** The server's process, whose memory is read. */
  server: ChildProcess;
  port: number;
  projectId: string;
  nodeId: string;
  kinds: readonly Kind[];
  /** Resolves once the server holds `n` subscriptions. */
  attached(n: number): Promise<void>;
  /** Publishes `total` events at RATE; the publish times by sequence number. */
  publish(total: number): Promise<{ sent: number[]; seconds: number; cpuMs: number }>;
}

/** What the floor comparison takes from a run: all subscribers' latencies, CPU and memory per subscriber. */
interface Summary {
  p50: number;
  p99: number;
  usPerDelivery: number;
  kbPerSubscriber: number;
}

/**
 * Opens SUBSCRIBERS subscribers of `target` in two child processes, publishes, and prints the latency and memory
 * tables. Memory: the server's VmRSS (settledMemory) before any subscriber, with all of them connected, once every
 * event was delivered, and its peak (VmHWM).
 */
async function measure(target: Target): Promise<Summary> {
  // Settled twice: a process a few seconds old still frees start-up memory after its first cycle (the bare floor's
  // RSS read 83 MB after one, 76 MB after the next, with no subscriber); read once, that drop made the floor's
  // difference per subscriber negative.
  await settledMemory(target.server);
  const idle = (await settledMemory(target.server)).rss;
  const half = Math.ceil(SUBSCRIBERS / 2);
  const workers = [0, 1].map((w) => {
    const count = w === 0 ? half : SUBSCRIBERS - half;
    const args = [SUBSCRIBER_ROLE, String(target.port), target.projectId, target.nodeId, String(w * half), String(count), target.kinds.join(",")];
    return fork(SELF, args, { stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced", execArgv: CHILD_EXEC_ARGV });
  });
  try {
    await Promise.all(workers.map((w) => new Promise((resolve) => w.once("message", resolve))));
    await target.attached(SUBSCRIBERS);
    const connected = (await settledMemory(target.server)).rss;
    // The first WARMUP_S seconds of events warm both ends up (compiled code, TCP windows) and are delivered and
    // checked like the rest, but left out of the latencies, as every other bench leaves its warm-up out.
    const warm = RATE * WARMUP_S;
    const total = warm + RATE * DURATION_S;
    const { sent, seconds, cpuMs } = await target.publish(total);
    // Late events are late, not lost: wait until every subscriber has everything, or nothing arrives for 5 s. The
    // first count waits a second: counting decodes everything read so far, which holds a subscriber's event loop
    // for a while, and the last events would be read late because of it.
    await new Promise((r) => setTimeout(r, 1000));
    const received = () => Promise.all(workers.map((w) => ask(w, "progress", "received"))).then(([a, b]) => a.received + b.received);
    for (let last = -1, quietSince = now(); ; ) {
      const n = await received();
      if (n === SUBSCRIBERS * total) break;
      if (n !== last) (last = n), (quietSince = now());
      else if (now() - quietSince > 5000) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const delivered = await settledMemory(target.server);
    const subs = (await Promise.all(workers.map((w) => ask(w, { sent }, "report")))).flatMap((m) => m.report);
    // The latencies of a group of subscribers' events after the warm-up, sorted.
    const latencies = (group: typeof subs) => group.flatMap((s) => s.latencies.slice(warm).filter((l: number) => !Number.isNaN(l))).sort((a: number, b: number) => a - b);
    const rows = [["subscribers", "events each", "delivered", "lost", "duplicates", "p50 ms", "p99 ms", "max ms"]];
    for (const kind of [...target.kinds, "all"] as const) {
      const group = subs.filter((s) => kind === "all" || s.kind === kind);
      const delivered = group.reduce((n, s) => n + total - s.lost, 0);
      const lat = latencies(group);
      const lost = group.reduce((n, s) => n + s.lost, 0);
      const dup = group.reduce((n, s) => n + s.duplicates, 0);
      rows.push([`${kind} (${group.length})`, String(total), String(delivered), String(lost), String(dup), percentile(lat, 50).toFixed(1), percentile(lat, 99).toFixed(1), (lat.at(-1) ?? NaN).toFixed(1)]);
    }
    printRows(rows);
    // Where the tail is: the p99 of the events published in each second of the run, the warm-up's in brackets.
    const perSecond = Array.from({ length: Math.ceil(total / RATE) }, (_, s) => {
      const lat = subs.flatMap((sub) => sub.latencies.slice(s * RATE, (s + 1) * RATE).filter((l: number) => !Number.isNaN(l)));
      const p99 = percentile(lat.sort((a: number, b: number) => a - b), 99).toFixed(0);
      return s < WARMUP_S ? `(${p99})` : p99;
    });
    console.log(`p99 ms of each second's events: ${perSecond.join(" ")}`);
    console.log(`latencies of the ${total - warm} events after a ${WARMUP_S} s warm-up; every event counted for losses`);
    console.log(`published ${total} events at ${(total / seconds).toFixed(1)}/s; latency = publish → event read by the subscriber`);
    const usPerDelivery = (1000 * cpuMs) / (total * SUBSCRIBERS);
    console.log(`server CPU while publishing: ${((100 * cpuMs) / 1000 / seconds).toFixed(0)}% of a core, ${usPerDelivery.toFixed(1)} µs per delivery`);
    const kbPerSubscriber = ((connected - idle) * 1024) / SUBSCRIBERS;
    console.log();
    printRows([
      ["server memory", "idle, no subscriber", `${SUBSCRIBERS} connected, idle`, "all events delivered", "peak (VmHWM)", "per subscriber"],
      ["VmRSS", ...[idle, connected, delivered.rss, delivered.hwm].map((mb) => `${mb.toFixed(1)} MB`), `${kbPerSubscriber.toFixed(1)} KB`],
    ]);
    console.log(`per subscriber = (connected − idle) / ${SUBSCRIBERS}; each reading after a full GC and ${IDLE_MS / 1000} s idle; the server child runs under the bench's tsx loader, which the absolute figures include and the difference does not`);
    const all = latencies(subs);
    return { p50: percentile(all, 50), p99: percentile(all, 99), usPerDelivery, kbPerSubscriber };
  } finally {
    // A worker exits once it has reported; one still running is stopped.
    for (const w of workers) if (w.exitCode === null) w.kill();
  }
}

async function main() {
  await benchRun(SELF, (kind) => `patchbay event fan-out benchmark: ${kind}, ${SUBSCRIBERS} subscribers, ${RATE} events/s for ${DURATION_S} s`, 32, async ({ patchbay, port, agent, children }) => {
    const project = await requestJson(agent, port, "POST", "/v2/projects", { name: "fanout", auto_close: false });
    const node = await requestJson(agent, port, "POST", `/v2/projects/${project.project_id}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });

    console.log(`\nPatchbay: ${KINDS.join(", ")} (node.updated published on the bus by publishTopologyEvent)\n`);
    const measured = await measure({
      server: patchbay,
      port,
      projectId: project.project_id,
      nodeId: node.node_id,
      kinds: KINDS,
      // Attached once the server counts the stream (a socket open is not yet a subscription; the bus's subscribers
      // are fewer: GraphQL clients of one stream share one execution).
      async attached(n) {
        for (const t0 = Date.now(); ; await new Promise((r) => setTimeout(r, 200))) {
          const metrics = (await request(agent, port, { method: "GET", path: "/metrics" })).body;
          const open = [...metrics.matchAll(/^patchbay_open_streams\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
          if (open >= n) return;
          if (Date.now() - t0 > 60_000) throw new Error(`only ${open} of ${n} subscribers attached`);
        }
      },
      publish: (total) => ask(patchbay, { publish: { projectId: project.project_id, nodeId: node.node_id, rate: RATE, total } }, "sent"),
    });
    agent.destroy();

    const bare = await startChild(SELF, [BARE_FANOUT_ROLE]);
    children.push(bare.child);
    console.log(`\nfloor: bare node:http + ws in one process, the same lines, half WebSocket, half HTTP stream\n`);
    const floor = await measure({
      server: bare.child,
      port: bare.msg.port,
      projectId: project.project_id,
      nodeId: node.node_id,
      kinds: KINDS.filter((k) => k.startsWith("gns3")).length ? KINDS.filter((k) => k.startsWith("gns3")) : ["gns3-ws", "gns3-http"],
      async attached(n) {
        for (const t0 = Date.now(); (await ask(bare.child, "count", "count")).count < n; await new Promise((r) => setTimeout(r, 200))) {
          if (Date.now() - t0 > 60_000) throw new Error(`the bare server did not get ${n} subscribers`);
        }
      },
      publish: (total) => ask(bare.child, { publish: { node, rate: RATE, total } }, "sent"),
    });
    printRatios(measured, floor);
  });
}

/** Patchbay next to the floor, all subscribers together. */
function printRatios(measured: Summary, floor: Summary): void {
  // No ratio to a floor at or below zero: a memory difference within the noise of the readings.
  const ratio = (a: number, b: number) => (a > 0 && b > 0 ? `${(a / b).toFixed(2)}×` : "n/a");
  const row = (name: string, key: keyof Summary, unit: string) => [name, `${measured[key].toFixed(1)} ${unit}`, `${floor[key].toFixed(1)} ${unit}`, ratio(measured[key], floor[key])];
  console.log(`\nPatchbay vs the floor, ${SUBSCRIBERS} subscribers\n`);
  printRows([
    ["", "Patchbay", "floor", "ratio"],
    row("latency p50", "p50", "ms"),
    row("latency p99", "p99", "ms"),
    row("server CPU per delivery", "usPerDelivery", "µs"),
    row("server memory per subscriber", "kbPerSubscriber", "KB"),
  ]);
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const role = process.argv[2];
  if (role === PATCHBAY_ROLE) await servePatchbay(process.argv[3], process.argv[4], (m, server) => void publishEvents(m, server));
  else if (role === SUBSCRIBER_ROLE)
    await runSubscribers(Number(process.argv[3]), process.argv[4], process.argv[5], Number(process.argv[6]), Number(process.argv[7]), process.argv[8].split(",") as Kind[]);
  else if (role === BARE_FANOUT_ROLE) serveBareFanout();
  else await main();
}
