/**
 * Start time and memory benchmark (run: `npm run bench:startup`).
 *
 * Starts the server the way a user does — the README's `npm start` (the real command, through npm), on an existing
 * database — and measures:
 *   - start: from spawning `npm start` to the first 200 of `GET /v2/version`;
 *   - the resident set (RSS, /proc/<pid>/status VmRSS) of the server's node process (not npm's) after ~5 s idle,
 *     then again after a short warm-up (a nodes list, a GraphQL query, a quota rules page) and 2 s idle;
 *   - the peak RSS of that process (VmHWM);
 *   - the floor, in the same run: a bare node:http server (`node -e`, the same node binary, answering 200) spawned
 *     and polled the same way before each measured start, its median start and the ratio printed beside Patchbay's.
 * Several runs; the medians are printed. The database is made once before the runs (a first start migrates it, a
 * project of 20 nodes and the demo storage objects with quota rules are created through the API), so each
 * measured start is "an existing database".
 *
 * Env: BENCH_DATABASE_URL=postgres://… (a fresh database is created on that server; default: SQLite in a temp
 * dir), BENCH_RUNS (5), BENCH_IDLE_S (5), BENCH_COMMAND (`npm`: `npm start`; `bin`: the package's bin,
 * `node --max-semi-space-size=4 dist/launch.js`, as its shebang runs it), BENCH_NODES (20: vpcs nodes in the
 * project, behind 8-port switches, every PC linked), BENCH_SETTLE_S (15: a second idle reading that much later, once
 * V8's memory reducer has run: the first one still holds start-up's garbage), BENCH_BRINGUP (1: each run opens the project and starts all
 * its nodes before the idle reading, so the idle RSS is "the lab open and running"; 0: not).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { buildProject, exited, freshDatabase, machineLine, memory, request } from "./harness.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 5);
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const COMMAND = process.env.BENCH_COMMAND === "bin" ? "bin" : "npm";
const NODES = Number(process.env.BENCH_NODES ?? 20);
const BRINGUP = process.env.BENCH_BRINGUP !== "0";
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 15);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The descendants of `pid` (from /proc), depth first. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

const comm = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
};

/** The server: the node process under npm (npm is a node process too; it is the root, not a descendant), or the bin itself. */
function serverPid(npmPid: number): number | undefined {
  return COMMAND === "bin" ? npmPid : descendants(npmPid).find((p) => comm(p) === "node");
}

interface Started {
  npm: ChildProcess;
  port: number;
  ms: number;
  /** From the spawn to the first GraphQL answer (asked right after the first answer: GraphQL is built on first use). */
  graphqlMs: number;
  stderr: () => string;
}

/** Spawns `command` with `args` in the repository, with `env` added to this process's, its stderr kept for errors. */
function launch(command: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; stderr: () => string } {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.on("data", (c) => (err += c));
  return { child, stderr: () => err };
}

/** Polls `GET /v2/version` on `port` every 5 ms until a 200: the milliseconds since `t0`. */
async function firstAnswer(child: ChildProcess, stderr: () => string, port: number, t0: number, agent: http.Agent): Promise<number> {
  let exited = child.exitCode !== null;
  child.once("exit", () => (exited = true));
  for (;;) {
    if (exited) throw new Error(`the server exited before answering:\n${stderr()}`);
    const ok = await request(agent, port, { method: "GET", path: "/v2/version" }).then((r) => r.status === 200, () => false);
    if (ok) return performance.now() - t0;
    if (performance.now() - t0 > 60_000) throw new Error(`no answer within 60 s:\n${stderr()}`);
    await sleep(5);
  }
}

/**
 * `npm start -- --port P --data-dir D` with DATABASE_URL, as a user runs it (or the bin, BENCH_COMMAND=bin); resolves
 * at the first 200 of /v2/version.
 */
async function start(databaseUrl: string, dataDir: string, extra: string[] = []): Promise<Started> {
  const port = await freePort();
  const args = ["--port", String(port), "--data-dir", dataDir, ...extra];
  const t0 = performance.now();
  const env = { DATABASE_URL: databaseUrl };
  const { child: npm, stderr } = COMMAND === "bin"
    ? launch(process.execPath, ["--max-semi-space-size=4", path.join(ROOT, "dist/launch.js"), ...args], env)
    : launch(NPM, ["start", "--", ...args], env);
  const agent = new http.Agent({ keepAlive: false });
  const ms = await firstAnswer(npm, stderr, port, t0, agent);
  const gql = await request(agent, port, { method: "POST", path: "/graphql", body: JSON.stringify({ query: "{ emulationVersion }" }) });
  if (gql.status !== 200) throw new Error(`first GraphQL request: ${gql.status} ${gql.body.slice(0, 200)}`);
  return { npm, port, ms, graphqlMs: performance.now() - t0, stderr };
}

/** The floor: a bare node:http server answering 200 to anything, started by the same node binary and polled alike. */
const BARE_SERVER = "require('node:http').createServer((req, res) => res.end()).listen(Number(process.argv[1]), '127.0.0.1')";

/** The floor's start, spawned and timed as `start` does: milliseconds to its first 200. */
async function bareStart(): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const { child, stderr } = launch(process.execPath, ["-e", BARE_SERVER, String(port)], {});
  try {
    return await firstAnswer(child, stderr, port, t0, new http.Agent({ keepAlive: false }));
  } finally {
    const gone = exited(child);
    child.kill("SIGTERM");
    await gone;
  }
}

async function stop(s: Started): Promise<void> {
  const pid = serverPid(s.npm.pid!);
  const gone = exited(s.npm);
  if (pid) process.kill(pid, "SIGTERM");
  else s.npm.kill("SIGTERM");
  await gone;
}

const api = async (port: number, method: "GET" | "POST", p: string, body?: unknown) => {
  const agent = new http.Agent({ keepAlive: false });
  const r = await request(agent, port, { method, path: p, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.body.slice(0, 300)}`);
  return r.body ? JSON.parse(r.body) : null;
};

/** The database every measured start finds: migrated, a project of NODES linked vpcs, demo storage objects with rules. */
async function prepare(databaseUrl: string, dataDir: string): Promise<{ projectId: string; firstStartMs: number }> {
  const s = await start(databaseUrl, dataDir, ["--demo"]);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const projectId = await buildProject(agent, s.port, "startup-bench", NODES, "pcs");
    agent.destroy();
    for (const qtree of ["qt1", "qt2"]) {
      await api(s.port, "POST", "/api/storage/quota/rules?return_timeout=15", {
        svm: { name: "vs0" }, volume: { name: "vol1" }, type: "tree", qtree: { name: qtree }, space: { hard_limit: 1024 ** 3 },
      });
    }
    return { projectId, firstStartMs: s.ms };
  } finally {
    await stop(s);
  }
}

const GRAPHQL = JSON.stringify({ query: "query($id: ID!) { project(id: $id) { id name nodes(first: 100) { edges { node { id name status ports { name } } } } links(first: 100) { edges { node { id } } } } }" });

/** A short warm-up: the requests a GUI and an API client send first. */
async function warmUp(port: number, projectId: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true });
  const gql = JSON.stringify({ ...JSON.parse(GRAPHQL), variables: { id: projectId } });
  for (let i = 0; i < 20; i++) {
    const results = await Promise.all([
      request(agent, port, { method: "GET", path: `/v2/projects/${projectId}/nodes` }),
      request(agent, port, { method: "POST", path: "/graphql", body: gql }),
      request(agent, port, { method: "GET", path: "/api/storage/quota/rules?max_records=50&fields=*" }),
    ]);
    for (const r of results) if (r.status !== 200) throw new Error(`warm-up: ${r.status} ${r.body.slice(0, 200)}`);
  }
  agent.destroy();
}

async function main() {
  const db = await freshDatabase();
  console.log(machineLine());
  const command = COMMAND === "bin" ? "node --max-semi-space-size=4 dist/launch.js" : `npm start (${JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.start})`;
  console.log(`database: ${db.kind}; command: ${command}; ${RUNS} runs; project of ${NODES} linked vpcs${BRINGUP ? ", all started before the idle reading" : ""}`);
  try {
    const { projectId, firstStartMs } = await prepare(db.url, db.dataDir);
    console.log(`first start (creates and migrates the database): ${firstStartMs.toFixed(0)} ms`);
    const rows: { bareMs: number; ms: number; graphqlMs: number; idle: number; settled: number; warm: number; hwm: number }[] = [];
    for (let run = 1; run <= RUNS; run++) {
      // The floor just before each measured start, so both see the same machine load.
      const bareMs = await bareStart();
      const s = await start(db.url, db.dataDir);
      try {
        const pid = serverPid(s.npm.pid!);
        if (!pid) throw new Error("server process not found under npm");
        if (BRINGUP) {
          await api(s.port, "POST", `/v2/projects/${projectId}/open`, {});
          await api(s.port, "POST", `/v2/projects/${projectId}/nodes/start`, {});
        }
        await sleep(IDLE_S * 1000);
        const idle = memory(pid).rss;
        await sleep(SETTLE_S * 1000);
        const settled = memory(pid).rss;
        await warmUp(s.port, projectId);
        await sleep(2000);
        const { rss: warm, hwm } = memory(pid);
        rows.push({ bareMs, ms: s.ms, graphqlMs: s.graphqlMs, idle, settled, warm, hwm });
        console.log(`run ${run}: bare node:http start ${bareMs.toFixed(0)} ms, start ${s.ms.toFixed(0)} ms, first GraphQL answer ${s.graphqlMs.toFixed(0)} ms, idle RSS ${idle.toFixed(0)} MB, ${SETTLE_S} s later ${settled.toFixed(0)} MB, after warm-up ${warm.toFixed(0)} MB, peak ${hwm.toFixed(0)} MB`);
      } finally {
        await stop(s);
      }
    }
    const m = (k: keyof (typeof rows)[0]) => median(rows.map((r) => r[k]));
    console.log();
    console.log(`| database | start → first answer (median) | bare node:http start (median) | vs bare | → first GraphQL answer | idle RSS (${IDLE_S} s) | settled (+${SETTLE_S} s) | RSS after warm-up | peak RSS | load1 |`);
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    console.log(`| ${db.kind} | ${m("ms").toFixed(0)} ms | ${m("bareMs").toFixed(0)} ms | ${(m("ms") / m("bareMs")).toFixed(2)}× | ${m("graphqlMs").toFixed(0)} ms | ${m("idle").toFixed(0)} MB | ${m("settled").toFixed(0)} MB | ${m("warm").toFixed(0)} MB | ${m("hwm").toFixed(0)} MB | ${os.loadavg()[0].toFixed(1)} |`);
  } finally {
    await db.drop();
  }
}

await main();
