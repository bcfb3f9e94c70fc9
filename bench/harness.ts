// Shared by the benchmarks: Patchbay as production runs it (the bundle), a keep-alive HTTP load generator, a bare
// Node server to compare against (same body, same client, same run), child-process plumbing, memory readings and
// scratch databases. Benchmarks print numbers; nothing here asserts a timing.
import { fork, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { createPostgresDatabase } from "../test/support/databases.js";

const env = process.env;
export const CONCURRENCY = Number(env.BENCH_CONCURRENCY ?? 16);
export const DURATION_S = Number(env.BENCH_DURATION ?? 10);
export const WARMUP_S = Number(env.BENCH_WARMUP ?? 2);

/** Role of a bench child process that serves `body` from a bare http.createServer (see startChild). */
export const BARE_ROLE = "--serve-bare";

/** The comparison floor: the same bytes from a bare http.createServer, with no routing, database or serialization. */
export function serveBare(bodyFile: string): void {
  const body = fs.readFileSync(bodyFile);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    res.end(body);
  });
  server.listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on("message", (m) => m === "stop" && server.close(() => process.exit(0)));
}


/** Role of a bench child process that runs Patchbay (see servePatchbay). */
export const PATCHBAY_ROLE = "--serve-patchbay";

/** What the bundle's library() gives: the server and the module state a benchmark applies to it (src/library.ts). */
export type PatchbayLibrary = Awaited<ReturnType<(typeof import("../src/bundle.js"))["library"]>>;
let library: Promise<PatchbayLibrary> | undefined;

/**
 * The server production runs: dist/patchbay.cjs (what `npm start` and the bin run), rebuilt first when src/ changed
 * since the last build, as scripts/start.mjs does. Loaded once per process, so what a benchmark takes from it
 * (publishTopologyEvent…) acts on the running server's module state, not on a second copy from src/.
 */
export function patchbayLibrary(): Promise<PatchbayLibrary> {
  library ??= (async () => {
    const build = spawnSync(process.execPath, [path.resolve(import.meta.dirname, "../scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
    if (build.status !== 0) throw new Error("the build of dist/ failed");
    const bundle: typeof import("../src/bundle.js") = createRequire(import.meta.url)("../dist/patchbay.cjs");
    return bundle.library();
  })();
  return library;
}

/**
 * The server child: Patchbay from the bundle on a free port (sent to the parent), with a counter of the SQL
 * statements its database client sends (the parent asks with "statements"); "stop" closes it.
 */
export async function servePatchbay(
  databaseUrl: string,
  dataDir: string,
  onMessage?: (message: any, server: import("../src/server.js").RunningServer) => void,
): Promise<void> {
  const { loadConfig, startServer } = await patchbayLibrary();
  let statements = 0;
  const server = await startServer(
    { ...loadConfig([], {}), port: 0, dataDir, databaseUrl, logRequests: false, redisUrl: undefined, consolePorts: [20000, 29999] },
    {
      onSqlStatement: (sql) => {
        statements++;
        if (env.BENCH_SQL_LOG) fs.appendFileSync(env.BENCH_SQL_LOG, `${sql.replace(/\s+/g, " ")}\n`);
      },
    },
  );
  process.send!({ port: server.port });
  process.on("message", async (m) => {
    if (m === "statements") process.send!({ statements });
    collectOnRequest(m);
    onMessage?.(m, server);
    if (m === "stop") {
      await server.close();
      process.exit(0);
    }
  });
}

/** Sends `message` to a child and resolves with its first answer that carries `key`. */
export function ask(child: ChildProcess, message: unknown, key: string): Promise<any> {
  return new Promise((resolve) => {
    const on = (m: any) => m?.[key] !== undefined && (child.off("message", on), resolve(m));
    child.on("message", on);
    child.send(message as never);
  });
}

/** BENCH_CPU_PROF=dir: every bench child writes a V8 CPU profile there when it exits (NODE_OPTIONS refuses it). */
export const CHILD_EXEC_ARGV = [...process.execArgv, ...(env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${env.BENCH_CPU_PROF}`] : [])];

/** Forks `script` with `args`; resolves with its first IPC message (e.g. the port it listens on). */
export function startChild(script: string, args: string[]): Promise<{ child: ChildProcess; msg: any }> {
  const child = fork(script, args, { stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv: CHILD_EXEC_ARGV });
  return new Promise((resolve, reject) => {
    child.once("message", (msg) => resolve({ child, msg }));
    child.once("exit", (code) => reject(new Error(`child ${args[0]} exited with ${code}`)));
  });
}


/** Starts `script` in the bare role serving `body` (passed through a file: large bodies exceed argv limits). */
export function startBare(script: string, body: string): Promise<{ child: ChildProcess; msg: any }> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-bare-")), "body.json");
  fs.writeFileSync(file, body);
  return startChild(script, [BARE_ROLE, file]);
}

/** Settles once `child` has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));
}

export async function stopChildren(children: ChildProcess[]): Promise<void> {
  for (const c of children) {
    c.send("stop");
    await exited(c);
  }
}

export interface Req {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  body?: string;
}

export function request(agent: http.Agent, port: number, r: Req): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        agent,
        method: r.method,
        path: r.path,
        headers: r.body ? { "content-type": "application/json", "content-length": Buffer.byteLength(r.body) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    req.end(r.body);
  });
}

/** A JSON request that must succeed (a benchmark's set-up): the parsed answer, or an error naming the request. */
export async function requestJson(agent: http.Agent, port: number, method: Req["method"], p: string, body?: unknown): Promise<any> {
  const r = await request(agent, port, { method, path: p, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.body.slice(0, 300)}`);
  return JSON.parse(r.body || "null");
}

export interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  bytes: number;
  errors: number;
  /** 1-minute load average at the end of the run (other processes on the machine skew the numbers). */
  load: number;
}

export async function measure(name: string, port: number, r: Req): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let phase: "warmup" | "measure" | "done" = "warmup";
  const latencies: number[] = [];
  let errors = 0;
  let bytes = 0;
  const worker = async () => {
    while (phase !== "done") {
      const t0 = performance.now();
      const res = await request(agent, port, r);
      const ms = performance.now() - t0;
      if (phase !== "measure") continue;
      if (res.status !== 200) errors++;
      else latencies.push(ms);
      bytes = res.body.length;
    }
  };
  const workers = Array.from({ length: CONCURRENCY }, worker);
  await new Promise((res) => setTimeout(res, WARMUP_S * 1000));
  phase = "measure";
  const t0 = performance.now();
  await new Promise((res) => setTimeout(res, DURATION_S * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  phase = "done";
  const counted = latencies.length; // requests completed inside the window
  await Promise.all(workers);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { name, rps: counted / elapsed, p50: q(0.5), p99: q(0.99), bytes, errors, load: os.loadavg()[0] };
}


/** A scratch database: SQLite in a temp dir, or a fresh PostgreSQL database when BENCH_DATABASE_URL is one. */
export async function freshDatabase(): Promise<{ url: string; dataDir: string; drop: () => Promise<void>; kind: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-bench-"));
  const admin = env.BENCH_DATABASE_URL;
  if (!admin || !/^postgres(ql)?:\/\//.test(admin)) {
    return { url: `file:${path.join(dataDir, "bench.db")}`, dataDir, kind: "SQLite", drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  }
  const db = await createPostgresDatabase(admin, "patchbay_bench");
  return {
    url: db.url,
    dataDir,
    kind: "PostgreSQL",
    drop: async () => {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}


/** What a benchmark run works with: Patchbay in a child process, a keep-alive agent, and the children to stop. */
export interface BenchRun {
  patchbay: ChildProcess;
  port: number;
  agent: http.Agent;
  children: ChildProcess[];
}

/**
 * One benchmark run: a fresh database, the title (given the database kind) and the machine line printed, Patchbay
 * started from `script` in a child process; every child is stopped and the database dropped however `run` ends.
 */
export async function benchRun(script: string, title: (kind: string) => string, maxSockets: number, run: (b: BenchRun) => Promise<void>): Promise<void> {
  const db = await freshDatabase();
  console.log(title(db.kind));
  console.log(machineLine());
  const children: ChildProcess[] = [];
  try {
    const pb = await startChild(script, [PATCHBAY_ROLE, db.url, db.dataDir]);
    children.push(pb.child);
    const agent = new http.Agent({ keepAlive: true, maxSockets });
    try {
      await run({ patchbay: pb.child, port: pb.msg.port as number, agent, children });
    } finally {
      agent.destroy();
    }
  } finally {
    await stopChildren(children);
    await db.drop();
  }
}

/**
 * A project of `n` nodes: switches of 8 ports, each with 7 vpcs nodes and an uplink to the previous switch. With
 * `count: "pcs"`, `n` counts the vpcs nodes only (the switches come on top).
 */
export async function buildProject(agent: http.Agent, port: number, name: string, n: number, count: "nodes" | "pcs" = "nodes"): Promise<string> {
  const { project_id: id } = await requestJson(agent, port, "POST", "/v2/projects", { name });
  const node = (body: object) => requestJson(agent, port, "POST", `/v2/projects/${id}/nodes`, { compute_id: "local", ...body });
  const link = (a: string, ap: number, b: string, bp: number) =>
    requestJson(agent, port, "POST", `/v2/projects/${id}/links`, {
      nodes: [{ node_id: a, adapter_number: 0, port_number: ap }, { node_id: b, adapter_number: 0, port_number: bp }],
    });
  let made = 0;
  let previous: string | undefined;
  for (let s = 0; made < n; s++) {
    const sw = (await node({ name: `SW${s + 1}`, node_type: "ethernet_switch" })).node_id as string;
    if (count === "nodes") made++;
    if (previous) await link(previous, 7, sw, 0);
    const pcs = Array.from({ length: Math.min(7 - (previous ? 1 : 0), n - made) }, (_, i) => i);
    made += pcs.length;
    // Parallel within a switch: the naming and console-port rules must hold under concurrent creates.
    const ids = await Promise.all(pcs.map((i) => node({ name: `PC${s * 7 + i + 1}`, node_type: "vpcs" }).then((r) => r.node_id as string)));
    await Promise.all(ids.map((pc, i) => link(pc, 0, sw, i + (previous ? 1 : 0))));
    previous = sw;
  }
  return id;
}

export function check(ok: boolean, what: string) {
  if (!ok) throw new Error(`sanity check failed: ${what}`);
}


/**
 * In a bench child: a full garbage collection when the parent asks ("gc"; answered with { gc: true }), so a memory
 * reading holds what the process retains, not the garbage V8 has yet to collect. gc() exposed at run time: the
 * server keeps the flags it runs with.
 */
export function collectOnRequest(message: unknown): void {
  if (message !== "gc") return;
  v8.setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  process.send!({ gc: true });
}

/** VmRSS and VmHWM (the peak resident set) of a process, in MB, from /proc/<pid>/status. */
export function memory(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

export function machineLine(): string {
  return `machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), node ${process.version}, ${os.platform()} ${os.release()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`;
}

/** Prints rows (the first is the header) as a Markdown table, the first column left-aligned, the others right. */
export function printRows(rows: string[][]): void {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => `| ${r.map((v, c) => (c === 0 ? v.padEnd(widths[c]) : v.padStart(widths[c]))).join(" | ")} |`;
  console.log(line(rows[0]));
  console.log(`|${widths.map((w, c) => (c === 0 ? "-".repeat(w + 2) : "-".repeat(w + 1) + ":")).join("|")}|`);
  for (const r of rows.slice(1)) console.log(line(r));
}

/** Prints results as a Markdown table; "vs bare" compares each row with the bare-server row named in `bareOf`. */
export function printTable(results: Result[], bareOf: (r: Result) => Result = () => results[0]): void {
  console.log();
  printRows([
    ["scenario", "req/s", "p50 ms", "p99 ms", "body B", "errors", "vs bare", "load1"],
    ...results.map((r) => [
      r.name, r.rps.toFixed(0), r.p50.toFixed(1), r.p99.toFixed(1), String(r.bytes), String(r.errors), `${((r.rps / bareOf(r).rps) * 100).toFixed(1)} %`, r.load.toFixed(1),
    ]),
  ]);
}
