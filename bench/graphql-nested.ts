/**
 * Nested GraphQL reads on a 1,000-node project (run: `npx tsx bench/graphql-nested.ts`).
 *
 * Issue 22 point 1: `project{nodes{links{endpoints{node{name}}}}}` took 145–150 s on 1,000 nodes, blocked every
 * other client meanwhile and then failed (SQLite "Expression tree is too large"). Measured here, through real HTTP
 * on a running Patchbay, for a project of 50 and one of 1,000 nodes (switches of 8 ports with 7 vpcs each, built
 * through the REST API like bench/emulation.ts, nodes not started):
 *   - cold reads: each read follows a write (a node moved), so the GraphQL read cache cannot answer: the time of one
 *     read, the SQL statements it costs, and the worst `/health` latency seen while it ran (a client probing every
 *     10 ms on another connection: what the read blocks others for);
 *   - warm reads under load (16 connections), beside a bare Node server sending the same bytes (the floor).
 *
 * Env: BENCH_DATABASE_URL=postgres://… (default: SQLite), BENCH_COLD_READS (10), BENCH_TIMEOUT_S (60),
 * BENCH_CONCURRENCY, BENCH_DURATION, BENCH_WARMUP (as in harness.ts), BENCH_SIZES (50,1000).
 */
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ask, BARE_ROLE, benchRun, buildProject, check, CONCURRENCY, DURATION_S, measure, PATCHBAY_ROLE, printTable, request, requestJson, serveBare, servePatchbay, startBare, WARMUP_S, type Req, type Result } from "./harness.js";

const SELF = fileURLToPath(import.meta.url);
const SIZES = (process.env.BENCH_SIZES ?? "50,1000").split(",").map(Number);
const COLD_READS = Number(process.env.BENCH_COLD_READS ?? 10);
const TIMEOUT_S = Number(process.env.BENCH_TIMEOUT_S ?? 60);

// One page of each (connections hold at most 100; 40 keeps the deepest read within the cost budget).
export const NESTED_READS = {
  "nodes{links{endpoints{node{name}}}}": `query($id: ID!) { project(id: $id) { nodes(first: 40) { edges { node { id links { id endpoints { adapterNumber portNumber node { name } } } } } } } }`,
  "nodes{links{id}}": `query($id: ID!) { project(id: $id) { nodes(first: 100) { edges { node { id links { id } } } } } }`,
  "nodes{nodeDirectory ports}": `query($id: ID!) { project(id: $id) { nodes(first: 100) { edges { node { id nodeDirectory ports { name } } } } } }`,
  "links{endpoints{node{links{id}}}}": `query($id: ID!) { project(id: $id) { links(first: 40) { edges { node { id endpoints { node { name links { id } } } } } } } }`,
};

/** BENCH_READS=1,0: which of NESTED_READS, in that order (a read that times out keeps the server busy). */
const READS = (process.env.BENCH_READS ?? "0,1,2,3").split(",").map((i) => Object.entries(NESTED_READS)[Number(i)]);

/** One request with a deadline: its time, status and body, or the timeout. */
function timedRequest(agent: http.Agent, port: number, r: Req): Promise<{ ms: number; status: number; body: string } | { ms: number; timeout: true }> {
  const t0 = performance.now();
  return Promise.race([
    request(agent, port, r).then((res) => ({ ms: performance.now() - t0, ...res })),
    new Promise<{ ms: number; timeout: true }>((res) => setTimeout(() => res({ ms: performance.now() - t0, timeout: true }), TIMEOUT_S * 1000).unref()),
  ]);
}

/** Probes GET /health every 10 ms on its own connection until stopped; the worst latency seen. */
function healthProbe(port: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let worst = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await request(agent, port, { method: "GET", path: "/health" });
      worst = Math.max(worst, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      agent.destroy();
      return worst;
    },
  };
}

interface Cold {
  name: string;
  p50: number;
  max: number;
  health: number;
  statements: number;
  outcome: string;
}

async function coldReads(child: ChildProcess, agent: http.Agent, port: number, projectId: string, nodeId: string, name: string, query: string): Promise<Cold> {
  const req: Req = { method: "POST", path: "/graphql", body: JSON.stringify({ query, variables: { id: projectId } }) };
  const times: number[] = [];
  let health = 0;
  let statements = 0;
  let outcome = "ok";
  for (let i = 0; i < COLD_READS; i++) {
    await requestJson(agent, port, "PUT", `/v2/projects/${projectId}/nodes/${nodeId}`, { x: i }); // drops the read cache
    const before = (await ask(child, "statements", "statements")).statements as number;
    const probe = healthProbe(port);
    const r = await timedRequest(agent, port, req);
    health = Math.max(health, await probe.stop());
    statements = (await ask(child, "statements", "statements")).statements - before;
    times.push(r.ms);
    if ("timeout" in r) {
      outcome = `timeout after ${TIMEOUT_S} s`;
      break;
    }
    const body = JSON.parse(r.body);
    if (body.errors) {
      outcome = `error: ${JSON.stringify(body.errors[0]).slice(0, 160)}`;
      break;
    }
  }
  times.sort((a, b) => a - b);
  return { name, p50: times[Math.floor(times.length / 2)], max: times[times.length - 1], health, statements, outcome };
}

async function main() {
  await benchRun(SELF, (kind) => `patchbay nested GraphQL reads: ${kind}, ${COLD_READS} cold reads each, ${CONCURRENCY} keep-alive connections, ${WARMUP_S} s warm-up + ${DURATION_S} s for warm reads`, 8, async ({ patchbay, port, agent, children }) => {
    const cold: Cold[] = [];
    const results: Result[] = [];
    const bareOf = new Map<Result, Result>();
    for (const size of SIZES) {
      const id = await buildProject(agent, port, `nested-${size}`, size);
      const nodes = await requestJson(agent, port, "GET", `/v2/projects/${id}/nodes`);
      check(nodes.length === size, `${size} nodes built`);
      const pc = nodes.find((n: { node_type: string }) => n.node_type === "vpcs").node_id as string;
      for (const [name, query] of READS) cold.push(await coldReads(patchbay, agent, port, id, pc, `${name}, ${size} nodes`, query));

      const [name, query] = Object.entries(NESTED_READS)[0];
      const req: Req = { method: "POST", path: "/graphql", body: JSON.stringify({ query, variables: { id } }) };
      const body = (await request(agent, port, req)).body;
      const parsed = JSON.parse(body);
      if (parsed.errors) {
        console.log(`warm reads of ${name} skipped at ${size} nodes: ${JSON.stringify(parsed.errors[0]).slice(0, 200)}`);
        continue;
      }
      check(parsed.data.project.nodes.edges.length === Math.min(size, 40), `GraphQL returns a page of ${Math.min(size, 40)} of ${size} nodes`);
      const bare = await startBare(SELF, body);
      children.push(bare.child);
      const b = await measure(`bare node http (body of the ${size}-node nested read, ${(Buffer.byteLength(body) / 1024).toFixed(1)} KB)`, bare.msg.port, { method: "GET", path: "/" });
      const g = await measure(`GraphQL ${name} (read cache), ${size} nodes`, port, req);
      results.push(b, g);
      bareOf.set(g, b);
    }
    agent.destroy();
    console.log("\nCold reads (after a write; one at a time), with /health probed every 10 ms meanwhile:\n");
    console.log("| read | p50 ms | max ms | worst /health ms | SQL statements | outcome |");
    console.log("|---|---:|---:|---:|---:|---|");
    for (const c of cold) console.log(`| ${c.name} | ${c.p50.toFixed(0)} | ${c.max.toFixed(0)} | ${c.health.toFixed(0)} | ${c.statements} | ${c.outcome} |`);
    if (results.length) printTable(results, (r) => bareOf.get(r) ?? r);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const role = process.argv[2];
  if (role === PATCHBAY_ROLE) await servePatchbay(process.argv[3], process.argv[4]);
  else if (role === BARE_ROLE) serveBare(process.argv[3]);
  else await main();
}
