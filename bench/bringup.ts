/**
 * Bring-up benchmark (run: `npm run bench:bringup`): how long "start all" takes until every console shows the
 * VPCS prompt, for a project of 50 and of 200 vpcs nodes (behind chained 8-port switches, every PC linked), next
 * to the floor measured in the same run: the same number of `vpcs` processes spawned directly, all at once, and
 * their consoles read until the prompt. Also "stop all" (every process gone) and closing the project with its
 * nodes running.
 *
 * Patchbay runs as a child process (SQLite unless BENCH_DATABASE_URL names PostgreSQL). "start all" is timed to
 * its answer and to the last console prompt read by a telnet client connected after the answer; the floor's
 * processes run unconfined, so the ratio includes what the sandbox costs. Env: BENCH_SIZES (50,200), BENCH_RUNS (3),
 * BENCH_SQL_LOG (a file: every SQL statement of the server, with a line before each start/stop all), BENCH_CPU_PROF.
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TelnetClient } from "../src/emulation/runtime/telnet-client.js";
import { findOwnedPids, killAndWait, OWNER_ENV, sleep } from "../src/emulation/runtime/processes.js";
import { findVpcs } from "../src/emulation/runtime/vpcs.js";
import { ask, buildProject, check, freshDatabase, machineLine, PATCHBAY_ROLE, request, requestJson, servePatchbay, startChild, stopChildren } from "./harness.js";

const SELF = fileURLToPath(import.meta.url);
const SIZES = (process.env.BENCH_SIZES ?? "50,200").split(",").map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PROMPT = /> $/;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t0: number) => performance.now() - t0;

/** A console connection, tried again while nothing listens yet (a vpcs launcher may exit before its daemon listens). */
async function connect(port: number, deadline = performance.now() + 15_000): Promise<TelnetClient> {
  for (;;) {
    try {
      return await TelnetClient.connect(port, "127.0.0.1", 10_000);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ECONNREFUSED" || performance.now() > deadline) throw e;
      await sleep(10);
    }
  }
}

/** Connects to every console and waits for its prompt; resolves when the last one showed it. */
async function allPrompts(ports: number[]): Promise<void> {
  await Promise.all(
    ports.map(async (port) => {
      const c = await connect(port);
      try {
        await c.waitFor(PROMPT, 15_000);
      } finally {
        c.close();
      }
    }),
  );
}

/** The floor: `n` vpcs daemons spawned at once (consoles and UDP ports of their own), until every prompt. */
async function floor(n: number, base: { console: number; udp: number }): Promise<number> {
  const binary = findVpcs();
  if (!binary) throw new Error("vpcs is not installed");
  const owner = `bench-bringup-${process.pid}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pb-bringup-"));
  const consoles = Array.from({ length: n }, (_, i) => base.console + i);
  const t0 = performance.now();
  try {
    await Promise.all(
      consoles.map(
        (port, i) =>
          new Promise<void>((resolve, reject) => {
            const udp = base.udp + i * 10;
            const args = ["-p", String(port), "-m", String(i % 256), "-i", "1", "-s", String(udp), "-c", String(udp + 1), "-t", "127.0.0.1"];
            // vpcs daemonizes: the process spawned exits once the console listens.
            const child = spawn(binary, args, { cwd: dir, env: { ...process.env, [OWNER_ENV]: owner }, stdio: "ignore" });
            child.once("error", reject);
            child.once("exit", () => resolve());
          }),
      ),
    );
    await allPrompts(consoles);
    return ms(t0);
  } finally {
    await killAndWait(findOwnedPids(owner), owner);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Timings { answer: number; ready: number; cpu: number; sql: number; stop: number; close: number }

/** CPU time (user + system, ms) a process has used: what a run costs the server whatever else the host does. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

async function patchbayRun(agent: http.Agent, port: number, server: ChildProcess, projectId: string): Promise<Timings> {
  const statements = async () => (await ask(server, "statements", "statements")).statements as number;
  const nodes = () => requestJson(agent, port, "GET", `/v2/projects/${projectId}/nodes`) as Promise<any[]>;
  const action = async (what: "start" | "stop") => {
    if (process.env.BENCH_SQL_LOG) fs.appendFileSync(process.env.BENCH_SQL_LOG, `=== ${what} all\n`);
    const r = await request(agent, port, { method: "POST", path: `/v2/projects/${projectId}/nodes/${what}`, body: "{}" });
    check(r.status === 204, `${what} all answered ${r.status} ${r.body.slice(0, 300)}`);
  };
  const pcs = (await nodes()).filter((n) => n.node_type === "vpcs");
  const [cpu0, sql0] = [cpuMs(server.pid!), await statements()];
  let t0 = performance.now();
  await action("start");
  const answer = ms(t0);
  const cpu = cpuMs(server.pid!) - cpu0;
  const sql = (await statements()) - sql0;
  await allPrompts(pcs.map((n) => n.console));
  const ready = ms(t0);
  check((await nodes()).every((n) => n.status === "started"), "every node started");

  t0 = performance.now();
  await action("stop");
  const stop = ms(t0);
  check((await nodes()).filter((n) => n.node_type === "vpcs").every((n) => n.status === "stopped"), "every vpcs stopped");

  // Close with every node running, then open again for the next run.
  await action("start");
  t0 = performance.now();
  await requestJson(agent, port, "POST", `/v2/projects/${projectId}/close`, {});
  const close = ms(t0);
  await requestJson(agent, port, "POST", `/v2/projects/${projectId}/open`, {});
  return { answer, ready, cpu, sql, stop, close };
}

async function main() {
  const db = await freshDatabase();
  console.log(`patchbay bring-up benchmark: ${db.kind}, sizes ${SIZES.join(", ")} vpcs nodes, ${RUNS} runs each (medians)`);
  console.log(machineLine());
  const children: ChildProcess[] = [];
  const rows: string[][] = [["vpcs nodes", "floor: spawned at once → every prompt", "start all → answer", "→ every prompt", "vs floor", "server CPU", "SQL statements", "stop all", "close (running)", "load1"]];
  try {
    const pb = await startChild(SELF, [PATCHBAY_ROLE, db.url, db.dataDir]);
    children.push(pb.child);
    const port = pb.msg.port as number;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    for (const size of SIZES) {
      const id = await buildProject(agent, port, `bringup-${size}`, size, "pcs");
      const floors: number[] = [];
      const runs: Timings[] = [];
      for (let r = 0; r < RUNS; r++) {
        floors.push(await floor(size, { console: 30000, udp: 31000 }));
        console.error(`${size} run ${r + 1}: floor ${floors.at(-1)!.toFixed(0)} ms (load ${os.loadavg()[0].toFixed(1)})`);
        await sleep(500);
        runs.push(await patchbayRun(agent, port, pb.child, id));
        console.error(`${size} run ${r + 1}: ready ${runs.at(-1)!.ready.toFixed(0)} ms (load ${os.loadavg()[0].toFixed(1)})`);
        await sleep(500);
        check(findOwnedPids(path.resolve(db.dataDir)).length === 0, "no node process left after close");
      }
      const f = median(floors);
      const m = (k: keyof Timings) => median(runs.map((x) => x[k]));
      rows.push([
        String(size), `${f.toFixed(0)} ms`, `${m("answer").toFixed(0)} ms`, `${m("ready").toFixed(0)} ms`, `${(m("ready") / f).toFixed(2)}×`, `${m("cpu").toFixed(0)} ms`, String(m("sql")),
        `${m("stop").toFixed(0)} ms`, `${m("close").toFixed(0)} ms`, os.loadavg()[0].toFixed(1),
      ]);
      console.log(`${size}: floor ${floors.map((x) => x.toFixed(0)).join("/")} ms; ready ${runs.map((x) => x.ready.toFixed(0)).join("/")} ms`);
    }
    agent.destroy();
    const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
    const line = (r: string[]) => `| ${r.map((v, c) => v.padStart(widths[c])).join(" | ")} |`;
    console.log();
    console.log(line(rows[0]));
    console.log(`|${widths.map((w) => "-".repeat(w + 1) + ":").join("|")}|`);
    for (const r of rows.slice(1)) console.log(line(r));
  } finally {
    await stopChildren(children);
    await db.drop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  if (process.argv[2] === PATCHBAY_ROLE) await servePatchbay(process.argv[3], process.argv[4]);
  else await main();
}
