/**
 * Emulation control-plane benchmark (run: `npm run bench:emulation`).
 *
 * Measures, through real HTTP on a running Patchbay, next to a bare Node server returning the same body, for a
 * project of 50 and one of 1,000 nodes:
 *   - REST `GET /v2/projects/{id}/nodes` (GNS3 clients poll this);
 *   - the GraphQL project query (nodes with ports, links with endpoints);
 * the SQL statements each request costs, and the write rate while the topologies are built through the REST API
 * (nodes and links created; nodes are not started: this measures the control plane, not the emulators).
 *
 * Env: BENCH_DATABASE_URL=postgres://… (default: SQLite), BENCH_SIZES (50,1000), BENCH_CONCURRENCY (16),
 * BENCH_DURATION (10 s), BENCH_WARMUP (2 s).
 */
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ask, BARE_ROLE, benchRun, buildProject, check, CONCURRENCY, DURATION_S, measure, PATCHBAY_ROLE, printTable, request, serveBare, servePatchbay, startBare, WARMUP_S, type Req, type Result } from "./harness.js";

const SELF = fileURLToPath(import.meta.url);
const SIZES = (process.env.BENCH_SIZES ?? "50,1000").split(",").map(Number);

const PROJECT_QUERY = `query($id: ID!) { project(id: $id) { id name status
  nodes(first: 100) { totalCount edges { node { id name nodeType status console consoleHost x y z ports { name shortName adapterNumber portNumber linkType } } } }
  links(first: 100) { totalCount edges { node { id linkType capturing suspend endpoints { adapterNumber portNumber node { id name } } } } } } }`;

async function statementsPerRequest(child: ChildProcess, agent: http.Agent, port: number, r: Req, times = 5): Promise<number> {
  const count = async () => (await ask(child, "statements", "statements")).statements as number;
  const before = await count();
  for (let i = 0; i < times; i++) await request(agent, port, r);
  return ((await count()) - before) / times;
}

async function main() {
  await benchRun(SELF, (kind) => `patchbay emulation benchmark: ${kind}, ${CONCURRENCY} keep-alive connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per scenario`, 8, async ({ patchbay, port, agent, children }) => {
    const results: Result[] = [];
    const bareOf = new Map<Result, Result>();
    const sql: string[] = [];
    const writes: string[] = [];
    for (const size of SIZES) {
      const t0 = performance.now();
      const id = await buildProject(agent, port, `bench-${size}`, size);
      const seconds = (performance.now() - t0) / 1000;
      writes.push(`${size} nodes + ${size - 1} links in ${seconds.toFixed(2)} s (${(size / seconds).toFixed(0)} nodes/s)`);

      const restReq: Req = { method: "GET", path: `/v2/projects/${id}/nodes` };
      const gqlReq: Req = { method: "POST", path: "/graphql", body: JSON.stringify({ query: PROJECT_QUERY, variables: { id } }) };
      // Sanity: the answers are complete before they are timed.
      const restBody = (await request(agent, port, restReq)).body;
      const nodes = JSON.parse(restBody);
      check(Array.isArray(nodes) && nodes.length === size, `REST lists ${size} nodes`);
      const gqlBody = (await request(agent, port, gqlReq)).body;
      const gql = JSON.parse(gqlBody);
      check(!gql.errors, `GraphQL errors ${JSON.stringify(gql.errors)}`);
      check(gql.data.project.nodes.totalCount === size, `GraphQL counts ${size} nodes (a page of ${Math.min(size, 100)})`);
      check(gql.data.project.links.edges.every((e: any) => e.node.endpoints.length === 2), "every link has two endpoints");
      sql.push(`${size} nodes: REST list ${await statementsPerRequest(patchbay, agent, port, restReq)}, GraphQL project ${await statementsPerRequest(patchbay, agent, port, gqlReq)}`);

      const bareRest = await startBare(SELF, restBody);
      const bareGql = await startBare(SELF, gqlBody);
      children.push(bareRest.child, bareGql.child);
      const kb = (body: string) => `${(Buffer.byteLength(body) / 1024).toFixed(1)} KB`;
      const b1 = await measure(`bare node http (body of the ${size}-node list, ${kb(restBody)})`, bareRest.msg.port, { method: "GET", path: "/" });
      const rest = await measure(`REST GET /v2/projects/{id}/nodes, ${size} nodes`, port, restReq);
      const b2 = await measure(`bare node http (body of the ${size}-node query, ${kb(gqlBody)})`, bareGql.msg.port, { method: "GET", path: "/" });
      const graph = await measure(`GraphQL project { nodes { ports } links { endpoints } }, ${size} nodes`, port, gqlReq);
      results.push(b1, rest, b2, graph);
      bareOf.set(rest, b1).set(graph, b2);
    }
    agent.destroy();
    printTable(results, (r) => bareOf.get(r) ?? r);
    console.log(`\nSQL statements per request (after the first, which fills the read views): ${sql.join("; ")}`);
    console.log(`Writes through the REST API (8 keep-alive connections): ${writes.join("; ")}`);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const role = process.argv[2];
  if (role === PATCHBAY_ROLE) await servePatchbay(process.argv[3], process.argv[4]);
  else if (role === BARE_ROLE) serveBare(process.argv[3]);
  else await main();
}
