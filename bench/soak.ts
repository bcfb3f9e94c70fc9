/**
 * Soak test (run: `npm run bench:soak`, or `npx tsx bench/soak.ts --minutes 5`).
 *
 * Starts the real server (`src/main.ts`) as a child process on an ephemeral loopback port with a fresh database,
 * builds a small lab (4 projects of a switch and 6 VPCS nodes, an SVM with a quota-enabled volume and 200 rules),
 * keeps 20 notification streams open (GNS3 HTTP NDJSON, both GNS3 WebSockets, GraphQL subscriptions over graphql-ws
 * and SSE), and drives a mixed load at a fixed rate (open loop: requests are sent on schedule whether or not the
 * previous ones answered): GNS3 reads and writes, node start/stop, link create/delete, ONTAP quota-rule and volume
 * reads and writes with their jobs, GraphQL queries and mutations, and short-lived streams that come and go.
 *
 * Every minute it prints request latency (p50/p99/max), the server's own event-loop delay (monitorEventLoopDelay,
 * reported by bench/soak-probe.ts preloaded into the child), and the child's RSS (/proc/<pid>/status VmRSS). At
 * the end: figures after warm-up, RSS after the load stops, and the verdict against p99 ≤ 50 ms and RSS growth < 10 %.
 *
 * Flags (or env): --minutes (SOAK_MINUTES, 30), --warmup minutes (SOAK_WARMUP, 5, at most a third of the run),
 * --rate req/s (SOAK_RATE, 50), --postgres [admin URL] (BENCH_DATABASE_URL; default SQLite),
 * --cpu-prof dir (child CPU profile), --heap-snapshots dir (after warm-up and at the end), --server script (the
 * child's entry, default src/main.ts: a wrapper that adds diagnostics must take the same flags), --nice n (the
 * server child's scheduling priority, e.g. -10 on a machine shared with other jobs; the load generator keeps 0).
 *
 * On a shared machine read the "CPU pressure" column (Linux PSI, /proc/pressure/cpu: share of the last minute in
 * which runnable tasks waited for a CPU): when it is high, latency measures the queue for the CPU, not the server.
 * `chrt -r 10 npm run bench:soak` (root) runs the whole soak in the real-time class so that other jobs do not queue
 * ahead of it; the pressure column then shows the others waiting, not the soak.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { exited, freshDatabase, machineLine, memory, request, type Req } from "./harness.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string" }, warmup: { type: "string" }, rate: { type: "string" },
    postgres: { type: "string" }, server: { type: "string" }, nice: { type: "string" }, "cpu-prof": { type: "string" }, "heap-snapshots": { type: "string" },
  },
});
if (flags.postgres !== undefined) process.env.BENCH_DATABASE_URL = flags.postgres || "postgres://postgres@127.0.0.1:5432/postgres";
const MINUTES = Number(flags.minutes ?? process.env.SOAK_MINUTES ?? 30);
const WARMUP_MIN = Math.min(Number(flags.warmup ?? process.env.SOAK_WARMUP ?? 5), MINUTES / 3);
const RATE = Number(flags.rate ?? process.env.SOAK_RATE ?? 50);
const PROJECTS = 4;
const PCS = 6;
const LIMITS = { p99Ms: 50, rssGrowth: 0.1 };

// ---------------------------------------------------------------------------------------------- the server child

interface Probe { p50: number; p99: number; max: number; heapUsed: number }

async function startPatchbay(databaseUrl: string, dataDir: string) {
  const nodeArgs = flags["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${flags["cpu-prof"]}`] : [];
  const logFile = path.join(dataDir, "requests.log");
  const child = spawn(
    process.execPath,
    [...nodeArgs, "--import", "tsx", "--import", "./bench/soak-probe.ts", flags.server ?? "src/main.ts",
      "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir, "--database-url", databaseUrl,
      "--console-ports", "21000-21999", "--udp-ports", "22000-23999"],
    // The request log goes to a file, as it would in production (a pipe nobody drains would stall the server).
    { cwd: ROOT, stdio: ["ignore", fs.openSync(logFile, "a"), "pipe", "ipc"] },
  );
  if (flags.nice) os.setPriority(child.pid!, Number(flags.nice));
  const probes: Probe[] = [];
  child.on("message", (m: { probe?: Probe }) => m.probe && probes.push(m.probe));
  const port = await new Promise<number>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d) => {
      err += d;
      const m = /Patchbay on https?:\/\/[^:]+:(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
  child.stderr!.on("data", (d) => process.stderr.write(`[server] ${d}`));
  return { child, port, probes, logFile };
}

/** CPU time (user + system) of a process so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** PSI: % of the last minute in which some runnable task waited for a CPU (NaN where the kernel has no PSI). */
function cpuPressure(): number {
  try {
    return Number(/^some .*?avg60=([\d.]+)/m.exec(fs.readFileSync("/proc/pressure/cpu", "utf8"))?.[1]);
  } catch {
    return NaN;
  }
}

function heapSnapshot(child: ChildProcess, name: string): Promise<void> {
  const dir = flags["heap-snapshots"];
  if (!dir) return Promise.resolve();
  fs.mkdirSync(dir, { recursive: true });
  child.send({ heapSnapshot: path.join(dir, `${name}.heapsnapshot`) });
  return new Promise((resolve) => child.on("message", (m: { heapSnapshotWritten?: string }) => m.heapSnapshotWritten && resolve()));
}

// ---------------------------------------------------------------------------------------------- HTTP client

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
let port = 0;

async function api(method: Req["method"], p: string, body?: unknown): Promise<any> {
  const r = await request(agent, port, { method, path: p, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.body.slice(0, 300)}`);
  return r.body ? JSON.parse(r.body) : undefined;
}

async function gql(query: string, variables?: Record<string, unknown>): Promise<any> {
  const r = await api("POST", "/graphql", { query, variables });
  if (r.errors) throw new Error(`GraphQL: ${JSON.stringify(r.errors).slice(0, 300)}`);
  return r.data;
}

// ---------------------------------------------------------------------------------------------- the lab

interface Lab {
  projects: { id: string; switchId: string; pcs: string[]; running: Set<string>; linkId?: string; extras: string[] }[];
  volumeUuid: string;
  rules: string[];
  jobs: string[];
}

async function buildLab(): Promise<Lab> {
  const lab: Lab = { projects: [], volumeUuid: "", rules: [], jobs: [] };
  for (let p = 1; p <= PROJECTS; p++) {
    const { project_id: id } = await api("POST", "/v2/projects", { name: `soak-${p}` });
    const node = (body: object) => api("POST", `/v2/projects/${id}/nodes`, { compute_id: "local", ...body });
    const switchId = (await node({ name: "SW1", node_type: "ethernet_switch" })).node_id;
    const pcs: string[] = [];
    for (let i = 1; i <= PCS; i++) pcs.push((await node({ name: `PC${i}`, node_type: "vpcs" })).node_id);
    // PC1..PC4 hang off the switch; PC5—PC6 is the link the load creates and deletes.
    for (let i = 0; i < 4; i++) {
      await api("POST", `/v2/projects/${id}/links`, {
        nodes: [{ node_id: pcs[i], adapter_number: 0, port_number: 0 }, { node_id: switchId, adapter_number: 0, port_number: i }],
      });
    }
    lab.projects.push({ id, switchId, pcs, running: new Set(), extras: [] });
  }
  await api("POST", "/api/svm/svms?return_timeout=30", { name: "soak" });
  const v = await api("POST", "/api/storage/volumes?return_records=true&return_timeout=30", { name: "vol1", "svm.name": "soak", size: 1024 ** 4 });
  lab.volumeUuid = v.records[0].uuid;
  for (const name of ["qt1", "qt2"]) await api("POST", "/api/storage/qtrees?return_timeout=30", { svm: { name: "soak" }, volume: { name: "vol1" }, name });
  for (let i = 0; i < 200; i++) lab.rules.push(await createRule(`base${i}`, i % 3 ? "" : "qt1"));
  await api("PATCH", `/api/storage/volumes/${lab.volumeUuid}?return_timeout=30`, { "quota.enabled": true });
  return lab;
}

let ruleSeq = 0;
async function createRule(user: string, qtree = ""): Promise<string> {
  const r = await api("POST", "/api/storage/quota/rules?return_timeout=30&return_records=true", {
    "svm.name": "soak", "volume.name": "vol1", type: "user", users: [{ name: user }], ...(qtree ? { qtree: { name: qtree } } : {}),
    space: { hard_limit: 1024 ** 3 }, files: { hard_limit: 10_000 },
  });
  return r.records[0].uuid;
}

// ---------------------------------------------------------------------------------------------- streams

interface Stream { kind: string; messages: number; open: boolean; close(): void }

function ndjsonStream(p: string): Stream {
  const s: Stream = { kind: "gns3-http", messages: 0, open: true, close: () => req.destroy() };
  const req = http.get({ host: "127.0.0.1", port, path: p, agent: false }, (res) => {
    res.on("data", (d: Buffer) => (s.messages += d.toString().split("\n").length - 1));
    res.on("close", () => (s.open = false));
  });
  req.on("error", () => (s.open = false));
  return s;
}

function gns3WebSocket(p: string): Stream {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${p}`);
  const s: Stream = { kind: "gns3-ws", messages: 0, open: true, close: () => ws.terminate() };
  ws.on("message", () => s.messages++);
  ws.on("close", () => (s.open = false));
  ws.on("error", () => (s.open = false));
  return s;
}

function graphqlWs(query: string): Stream {
  const client = createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
  const s: Stream = { kind: "graphql-ws", messages: 0, open: true, close: () => void client.dispose() };
  client.subscribe({ query }, { next: () => s.messages++, error: () => (s.open = false), complete: () => (s.open = false) });
  return s;
}

function graphqlSse(query: string): Stream {
  const s: Stream = { kind: "graphql-sse", messages: 0, open: true, close: () => req.destroy() };
  const req = http.get(
    { host: "127.0.0.1", port, path: `/graphql?query=${encodeURIComponent(query)}`, headers: { accept: "text/event-stream" }, agent: false },
    (res) => {
      res.on("data", (d: Buffer) => (s.messages += d.toString().split("event: next").length - 1));
      res.on("close", () => (s.open = false));
    },
  );
  req.on("error", () => (s.open = false));
  return s;
}

const PROJECT_EVENTS = (id: string) => `subscription { projectEvents(projectId: "${id}") { ... on SubscriptionProjectEventsSuccess { data { cursor action } } } }`;
const QUOTA_CHANGES = `subscription { quotaChanges(svm: { name: "soak" }) { cursor kind ruleUuid } }`;

function openStream(lab: Lab, i: number): Stream {
  const id = lab.projects[i % PROJECTS].id;
  switch (i % 5) {
    case 0: return ndjsonStream(`/v2/projects/${id}/notifications`);
    case 1: return gns3WebSocket("/v2/notifications/ws");
    case 2: return gns3WebSocket(`/v2/projects/${id}/notifications/ws`);
    case 3: return graphqlWs(i % 2 ? QUOTA_CHANGES : PROJECT_EVENTS(id));
    default: return graphqlSse(i % 2 ? PROJECT_EVENTS(id) : QUOTA_CHANGES);
  }
}

// ---------------------------------------------------------------------------------------------- the load mix

const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)];
const busy = new Set<string>(); // one state-changing request per node/link/rule at a time: the mix must not race itself

async function exclusive(key: string, fn: () => Promise<unknown>): Promise<unknown> {
  if (busy.has(key)) return api("GET", "/v2/version");
  busy.add(key);
  try {
    return await fn();
  } finally {
    busy.delete(key);
  }
}

const PROJECT_QUERY = `query($id: ID!) { project(id: $id) { id name status
  nodes(first: 100) { edges { node { id name nodeType status console x y ports { name adapterNumber portNumber } } } }
  links(first: 100) { edges { node { id endpoints { adapterNumber portNumber node { id name } } } } } } }`;
const RULES_QUERY = `{ quotaRules(filter: { svmName: { eq: "soak" }, type: [USER] }, first: 50) { totalCount edges { node { uuid type qtreeName spaceHardLimitBytes filesHardLimit users { name } } } } }`;

type Op = [weight: number, name: string, run: (lab: Lab) => Promise<unknown>];

/** Not API requests: a stream's lifetime, and node start/stop, which waits for a VPCS process (~300 ms to start). */
const UNTIMED = new Set(["short-lived stream"]);
const PROCESS_BOUND = new Set(["node start/stop"]);

const OPS: Op[] = [
  [5, "GET projects", () => api("GET", "/v2/projects")],
  [3, "GET project", (l) => api("GET", `/v2/projects/${pick(l.projects).id}`)],
  [8, "GET nodes", (l) => api("GET", `/v2/projects/${pick(l.projects).id}/nodes`)],
  [5, "GET links", (l) => api("GET", `/v2/projects/${pick(l.projects).id}/links`)],
  [3, "GET node", (l) => { const p = pick(l.projects); return api("GET", `/v2/projects/${p.id}/nodes/${pick(p.pcs)}`); }],
  [6, "PUT node (move)", (l) => {
    const p = pick(l.projects); const n = pick(p.pcs);
    return exclusive(n, () => api("PUT", `/v2/projects/${p.id}/nodes/${n}`, { x: Math.round(Math.random() * 800), y: Math.round(Math.random() * 600) }));
  }],
  [2, "node start/stop", (l) => {
    const p = pick(l.projects); const n = pick(p.pcs.slice(0, 4));
    return exclusive(n, async () => {
      const start = !p.running.has(n);
      await api("POST", `/v2/projects/${p.id}/nodes/${n}/${start ? "start" : "stop"}`, {});
      if (start) p.running.add(n); else p.running.delete(n);
    });
  }],
  [2, "link create/delete", (l) => {
    const p = pick(l.projects);
    return exclusive(`${p.id}/link`, async () => {
      if (p.linkId) {
        await api("DELETE", `/v2/projects/${p.id}/links/${p.linkId}`);
        p.linkId = undefined;
      } else {
        p.linkId = (await api("POST", `/v2/projects/${p.id}/links`, {
          nodes: [{ node_id: p.pcs[4], adapter_number: 0, port_number: 0 }, { node_id: p.pcs[5], adapter_number: 0, port_number: 0 }],
        })).link_id;
      }
    });
  }],
  [2, "node create/delete", (l) => {
    const p = pick(l.projects);
    return exclusive(`${p.id}/extras`, async () => {
      if (p.extras.length >= 5) await api("DELETE", `/v2/projects/${p.id}/nodes/${p.extras.shift()}`);
      else p.extras.push((await api("POST", `/v2/projects/${p.id}/nodes`, { compute_id: "local", name: "X1", node_type: "vpcs" })).node_id);
    });
  }],
  [8, "GET quota rules", () => api("GET", "/api/storage/quota/rules?svm.name=soak&type=user&fields=*&max_records=50")],
  [2, "GET quota rule", (l) => api("GET", `/api/storage/quota/rules/${pick(l.rules)}?fields=*`)],
  [3, "GET volumes", () => api("GET", "/api/storage/volumes?fields=*")],
  [2, "GET quota reports", () => api("GET", "/api/storage/quota/reports?volume.name=vol1&max_records=50&fields=*")],
  [3, "POST quota rule", async (l) => l.rules.push(await createRule(`soak${ruleSeq++}`))],
  [4, "PATCH quota rule", (l) => {
    const uuid = pick(l.rules);
    return exclusive(uuid, async () => {
      const r = await api("PATCH", `/api/storage/quota/rules/${uuid}?return_timeout=0`, { "space.hard_limit": (1 + Math.floor(Math.random() * 100)) * 1024 ** 2 });
      l.jobs.push(r.job.uuid);
      if (l.jobs.length > 100) l.jobs.shift();
    });
  }],
  [3, "DELETE quota rule", (l) => {
    if (l.rules.length <= 200) return api("GET", "/api/storage/quota/rules?return_records=false");
    const uuid = l.rules.splice(200 + Math.floor(Math.random() * (l.rules.length - 200)), 1)[0];
    return exclusive(uuid, () => api("DELETE", `/api/storage/quota/rules/${uuid}?return_timeout=30`));
  }],
  [2, "GET job", (l) => (l.jobs.length ? api("GET", `/api/cluster/jobs/${pick(l.jobs)}?fields=*`).catch(notFoundOk) : api("GET", "/api/cluster"))],
  [5, "GraphQL project", (l) => gql(PROJECT_QUERY, { id: pick(l.projects).id })],
  [5, "GraphQL quotaRules", () => gql(RULES_QUERY)],
  [2, "GraphQL updateNode", (l) => {
    const p = pick(l.projects); const n = pick(p.pcs);
    return exclusive(n, () => gql(`mutation($n: ID!, $x: Int!) { updateNode(input: { id: $n, x: $x }) { __typename } }`, { n, x: Math.round(Math.random() * 500) }));
  }],
  [1, "short-lived stream", async (l) => {
    const s = openStream(l, Math.floor(Math.random() * 20));
    await new Promise((r) => setTimeout(r, 500 + Math.random() * 2500));
    s.close();
  }],
];

/** A job is deleted 300 s after it ends (ONTAP behaviour): a 404 for an old one is an answer, not a failure. */
function notFoundOk(e: Error) {
  if (!/: 404 /.test(e.message)) throw e;
}

const TOTAL_WEIGHT = OPS.reduce((s, [w]) => s + w, 0);
function chooseOp(): Op {
  let r = Math.random() * TOTAL_WEIGHT;
  for (const op of OPS) if ((r -= op[0]) < 0) return op;
  return OPS[0];
}

// ---------------------------------------------------------------------------------------------- measuring

interface Minute { latencies: number[]; processBound: number[]; errors: number; probes: Probe[]; rss: number; cpu: number }
const byOp = new Map<string, number[]>();
const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "-");

function summarize(minutes: Minute[]) {
  const lat = minutes.flatMap((m) => m.latencies).sort((a, b) => a - b);
  const loop = minutes.flatMap((m) => m.probes);
  return {
    requests: lat.length,
    errors: minutes.reduce((s, m) => s + m.errors, 0),
    p50: q(lat, 0.5), p99: q(lat, 0.99), max: lat.at(-1) ?? NaN,
    loopP99: Math.max(...loop.map((p) => p.p99)), loopMax: Math.max(...loop.map((p) => p.max)),
  };
}

async function main() {
  const db = await freshDatabase();
  const server = await startPatchbay(db.url, db.dataDir);
  port = server.port;
  const pid = server.child.pid!;
  console.log(machineLine());
  console.log(`database: ${db.kind}; server pid ${pid} on 127.0.0.1:${port}; ${MINUTES} min at ${RATE} req/s, warm-up ${WARMUP_MIN} min`);
  const errorsSeen = new Map<string, number>();
  try {
    const t0 = Date.now();
    const lab = await buildLab();
    console.log(`lab built in ${((Date.now() - t0) / 1000).toFixed(1)} s; RSS ${memory(pid).rss.toFixed(0)} MB`);
    const streams = Array.from({ length: 20 }, (_, i) => openStream(lab, i));

    const minutes: Minute[] = [];
    const current = () => (minutes.at(-1) ?? newMinute());
    const newMinute = () => (minutes.push({ latencies: [], processBound: [], errors: 0, probes: [], rss: NaN, cpu: NaN }), minutes.at(-1)!);
    newMinute();
    server.probes.length = 0;
    console.log("\n| min | requests | errors | p50 ms | p99 ms | max ms | loop p99 ms | loop max ms | RSS MB | heap MB | server CPU % | CPU pressure % | stream msgs |");
    console.log("|----:|---------:|-------:|-------:|-------:|-------:|------------:|------------:|-------:|--------:|-------------:|---------------:|------------:|");
    const start = Date.now();
    const end = start + MINUTES * 60_000;
    let sent = 0;
    let inFlight = 0;
    let warmRss = NaN;
    let lastMsgs = 0;
    let lastCpu = cpuMs(pid);
    const minuteTimer = setInterval(async () => {
      const m = current();
      m.probes = server.probes.splice(0);
      m.rss = memory(pid).rss;
      const cpu = cpuMs(pid);
      m.cpu = (cpu - lastCpu) / 600; // % of one core over the minute
      lastCpu = cpu;
      const msgs = streams.reduce((s, x) => s + x.messages, 0);
      const sorted = [...m.latencies].sort((a, b) => a - b);
      const loop = m.probes;
      console.log(`| ${String(minutes.length).padStart(3)} | ${String(sorted.length).padStart(8)} | ${String(m.errors).padStart(6)} | ${fmt(q(sorted, 0.5)).padStart(6)} | ${fmt(q(sorted, 0.99)).padStart(6)} | ${fmt(sorted.at(-1) ?? NaN).padStart(6)} | ${fmt(Math.max(...loop.map((p) => p.p99))).padStart(11)} | ${fmt(Math.max(...loop.map((p) => p.max))).padStart(11)} | ${m.rss.toFixed(0).padStart(6)} | ${fmt((loop.at(-1)?.heapUsed ?? NaN) / 2 ** 20).padStart(7)} | ${m.cpu.toFixed(0).padStart(12)} | ${fmt(cpuPressure()).padStart(14)} | ${String(msgs - lastMsgs).padStart(11)} |`);
      lastMsgs = msgs;
      if (minutes.length === Math.round(WARMUP_MIN)) {
        warmRss = m.rss;
        await heapSnapshot(server.child, "after-warmup");
      }
      if (Date.now() < end - 1000) newMinute();
    }, 60_000);

    while (Date.now() < end) {
      const due = start + (sent * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sent++;
      if (inFlight > 500) {
        current().errors++; // the server is drowning: count the request as failed rather than pile on
        errorsSeen.set("not sent: 500 requests in flight", (errorsSeen.get("not sent: 500 requests in flight") ?? 0) + 1);
        continue;
      }
      const [, name, run] = chooseOp();
      const bucket = current();
      const t = performance.now();
      inFlight++;
      run(lab).then(
        () => {
          const ms = performance.now() - t;
          if (UNTIMED.has(name)) return;
          (PROCESS_BOUND.has(name) ? bucket.processBound : bucket.latencies).push(ms);
          if (minutes.length > Math.round(WARMUP_MIN)) byOp.set(name, [...(byOp.get(name) ?? []), ms]);
        },
        (e: Error) => {
          bucket.errors++;
          const key = `${name}: ${e.message.slice(0, 160)}`;
          errorsSeen.set(key, (errorsSeen.get(key) ?? 0) + 1);
        },
      ).finally(() => inFlight--);
    }
    await new Promise((r) => setTimeout(r, 1500)); // the last minute's report
    clearInterval(minuteTimer);
    await heapSnapshot(server.child, "end");

    const alive = streams.filter((s) => s.open && s.messages > 0).length;
    const rssEnd = minutes.at(-1)!.rss;
    for (const s of streams) s.close();
    agent.destroy();
    await new Promise((r) => setTimeout(r, 30_000));
    const rssIdle = memory(pid).rss;

    const after = summarize(minutes.slice(Math.round(WARMUP_MIN)));
    const growth = (rssEnd - warmRss) / warmRss;
    console.log(`\nafter warm-up (minutes ${Math.round(WARMUP_MIN) + 1}–${minutes.length}): ${after.requests} requests, ${after.errors} errors; ` +
      `latency p50 ${fmt(after.p50)} ms, p99 ${fmt(after.p99)} ms, max ${fmt(after.max)} ms; server event-loop delay p99 ${fmt(after.loopP99)} ms, max ${fmt(after.loopMax)} ms`);
    console.log(`RSS: ${warmRss.toFixed(0)} MB after warm-up → ${rssEnd.toFixed(0)} MB at the end (${(growth * 100).toFixed(1)} %), ${rssIdle.toFixed(0)} MB 30 s after the load stopped`);
    const started = minutes.slice(Math.round(WARMUP_MIN)).flatMap((m) => m.processBound).sort((a, b) => a - b);
    console.log(`node start/stop (waits for the VPCS process, not in the figures above): ${started.length}, p50 ${fmt(q(started, 0.5))} ms, p99 ${fmt(q(started, 0.99))} ms, max ${fmt(started.at(-1) ?? NaN)} ms`);
    console.log("per request kind after warm-up (p50 / p99 / max ms):");
    for (const [name, xs] of [...byOp].sort()) {
      xs.sort((a, b) => a - b);
      console.log(`  ${name.padEnd(22)} ${String(xs.length).padStart(6)}  ${fmt(q(xs, 0.5))} / ${fmt(q(xs, 0.99))} / ${fmt(xs.at(-1) ?? NaN)}`);
    }
    console.log(`streams alive with messages: ${alive}/20; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    for (const [k, n] of [...errorsSeen].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  error ×${n}: ${k}`);
    const pass = after.p99 <= LIMITS.p99Ms && growth < LIMITS.rssGrowth && alive === 20 && after.errors === 0;
    console.log(`verdict: ${pass ? "PASS" : "FAIL"} (p99 ≤ ${LIMITS.p99Ms} ms, RSS growth < ${LIMITS.rssGrowth * 100} %, all streams alive, no errors)`);
    process.exitCode = pass ? 0 : 1;
  } finally {
    server.child.kill("SIGTERM");
    await exited(server.child);
    if (!flags["cpu-prof"] && !flags["heap-snapshots"]) await db.drop();
    else console.log(`data dir kept: ${db.dataDir}`);
  }
}

await main();
