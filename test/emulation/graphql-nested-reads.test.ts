import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server.js";
import { loadConfig, startServer } from "../support/bundle.js";
import { freshDatabaseUrl, gql, nodesOf, portWindow } from "../support/server.js";

/**
 * Issue 22 point 1: reads cost what they return. Every relation of the emulation graph is planned with its parent
 * (or read in one batch for a whole list), so the SQL statements of a request do not grow with the project: the
 * nested read that took 145 s and then failed on 1,000 nodes ("Expression tree is too large") answers, with the
 * same number of statements as on 50 nodes. The cost of every query is in `extensions.cost`.
 */
let s: RunningServer;
let statements = 0;
let drop: () => Promise<void>;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-nested-"));
  const db = await freshDatabaseUrl(dataDir);
  drop = db.drop;
  s = await startServer(
    { ...loadConfig([], {}), port: 0, dataDir, instanceId: `test-${path.basename(dataDir)}`, databaseUrl: db.url, logRequests: false, redisUrl: undefined, ...portWindow() },
    { onSqlStatement: () => void statements++ },
  );
});
afterAll(async () => {
  await s.close();
  await drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Switches of 8 ports, each with 7 vpcs and an uplink to the previous switch (as bench/harness.ts builds), in bulk. */
async function project(n: number) {
  const projectId = randomUUID();
  await s.ctx.db.project.create({ data: { id: projectId, name: `p${n}-${projectId.slice(0, 4)}`, filename: "p.gns3" } });
  const nodes: { id: string; projectId: string; nodeType: string; name: string }[] = [];
  const links: { id: string; projectId: string }[] = [];
  const ends: { linkId: string; position: number; nodeId: string; adapterNumber: number; portNumber: number }[] = [];
  const connect = (a: string, ap: number, b: string, bp: number) => {
    const id = randomUUID();
    links.push({ id, projectId });
    ends.push({ linkId: id, position: 0, nodeId: a, adapterNumber: 0, portNumber: ap }, { linkId: id, position: 1, nodeId: b, adapterNumber: 0, portNumber: bp });
  };
  let previous: string | undefined;
  for (let sw = 0; nodes.length < n; sw++) {
    const swId = randomUUID();
    nodes.push({ id: swId, projectId, nodeType: "ethernet_switch", name: `SW${sw + 1}` });
    if (previous) connect(previous, 7, swId, 0);
    for (let i = previous ? 1 : 0; i < 7 && nodes.length < n; i++) {
      const pc = randomUUID();
      nodes.push({ id: pc, projectId, nodeType: "vpcs", name: `PC${sw * 7 + i + 1}` });
      connect(pc, 0, swId, i);
    }
    previous = swId;
  }
  await s.ctx.db.node.createMany({ data: nodes });
  await s.ctx.db.link.createMany({ data: links });
  await s.ctx.db.linkEndpoint.createMany({ data: ends });
  return { projectId, nodes, links };
}

// 40 nodes a page: links and endpoints count as 20 each (cost.ts), so 40 × 20 × 20 × … stays within the budget.
const PAGE = 40;
const NESTED = `query($id: ID!, $after: String) { project(id: $id) { nodes(first: ${PAGE}, after: $after) { totalCount pageInfo { hasNextPage endCursor }
  edges { node { id name links { linkId endpoints { node { name } } availableFilters { type } } } } } } }`;

async function counted<T>(read: () => Promise<T>): Promise<{ result: T; statements: number }> {
  s.ctx.services.emulation.reads.invalidate("*"); // no read cache: what a read costs
  const before = statements;
  const result = await read();
  return { result, statements: statements - before };
}

describe("nested reads", { timeout: 180_000 }, () => {
  it("project{nodes{links{endpoints{node}}}} pages 1,000 nodes, each page in as many statements as one of 50 nodes", async () => {
    const small = await project(50);
    const large = await project(1000);
    const a = await counted(() => gql(s.url, NESTED, { id: small.projectId }));
    expect(a.result.errors).toBeUndefined();
    expect(a.result.data.project.nodes.totalCount).toBe(50);
    expect(a.result.data.project.nodes.edges).toHaveLength(PAGE);
    expect(a.statements).toBeLessThanOrEqual(12);
    type N = { id: string; name: string; links: { linkId: string; endpoints: { node: { name: string } }[]; availableFilters: unknown[] }[] };
    const nodes: N[] = [];
    const pageStatements: number[] = [];
    for (let after: string | undefined, more = true; more; ) {
      const b = await counted(() => gql(s.url, NESTED, { id: large.projectId, after }));
      expect(b.result.errors).toBeUndefined();
      const page = b.result.data.project.nodes;
      expect(page.totalCount).toBe(1000);
      nodes.push(...nodesOf(page));
      pageStatements.push(b.statements);
      ({ hasNextPage: more, endCursor: after } = page.pageInfo);
    }
    expect(pageStatements).toHaveLength(1000 / PAGE);
    // Every page costs what the small project's one page does (a page after a cursor one statement more at most;
    // background work on a loaded host may add one or two): not one statement more per node or link.
    for (const n of pageStatements) expect(n).toBeLessThanOrEqual(Math.max(a.statements + 1, 12));
    expect(nodes).toHaveLength(1000);
    expect(new Set(nodes.map((n) => n.id)).size).toBe(1000);
    // Every link is seen from both its ends, with both ends' names; a switch has 8 links at most, a PC one.
    const seen = new Map<string, string>();
    for (const n of nodes) {
      if (n.name.startsWith("PC")) expect(n.links).toHaveLength(1);
      for (const l of n.links) {
        const names = l.endpoints.map((e) => e.node.name);
        expect(names).toContain(n.name);
        expect(l.availableFilters.length > 0).toBe(names.some((x) => x.startsWith("PC")));
        seen.set(l.linkId, (seen.get(l.linkId) ?? "") + "x");
      }
    }
    expect(seen.size).toBe(large.links.length);
    expect([...seen.values()].every((v) => v === "xx")).toBe(true);
    // Links in creation order, then by id (bulk-created rows share their creation time), as the REST list has them.
    const sw2 = nodes.find((n) => n.name === "SW2")!;
    expect(sw2.links).toHaveLength(8);
    expect(sw2.links.map((l) => l.linkId)).toEqual(sw2.links.map((l) => l.linkId).sort());
  });

  it("emulatedNode and projects plan their selections; nodeDirectory answers; the cost is in extensions", async () => {
    const { projectId, nodes } = await project(30);
    const pc = nodes.find((n) => n.nodeType === "vpcs")!;
    const r = await counted(() =>
      gql(s.url, `query($n: ID!) { emulatedNode(id: $n) { __typename ... on EmulatedNode { name nodeDirectory links { endpoints { node { name nodeDirectory } } } } } }`, { n: pc.id }),
    );
    expect(r.result.errors).toBeUndefined();
    const node = r.result.data.emulatedNode;
    expect(node.nodeDirectory).toBe(path.join(dataDir, "projects", projectId, "project-files", "vpcs", pc.id));
    expect(node.links[0].endpoints.map((e: any) => e.node.name)).toEqual([pc.name, "SW1"]);
    expect(node.links[0].endpoints[1].node.nodeDirectory).toBeNull(); // a switch has none

    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ projects(first: 10) { edges { node { projectId stats { nodes links } nodes(first: 5) { totalCount edges { node { id } } } } } } }` }),
    });
    const body = await res.json();
    expect(body.errors).toBeUndefined();
    const listed = nodesOf(body.data.projects).find((p: any) => p.projectId === projectId);
    expect(listed.stats).toEqual({ nodes: 30, links: 29 });
    expect(listed.nodes.totalCount).toBe(30);
    expect(listed.nodes.edges).toHaveLength(5);
    // projects (1 + edges: 10 × (1 + node (1 + id + stats (1 + 2) + nodes (1 + totalCount + edges: 5 × (1 + node (1 + id)))))),
    // as the cost model counts (a page by its `first`)
    expect(body.extensions.cost).toEqual({ requested: 1 + 10 * (1 + 1 + 1 + 3 + (1 + 1 + 5 * (1 + 1 + 1))), limit: 100_000, listSize: 20 });

    // A query the read cache answers (the second time, without execution) reports its cost too.
    for (let i = 0; i < 2; i++) {
      const cached = await fetch(`${s.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: `{ project(id: "${projectId}") { id nodes { edges { node { id } } } } }` }) });
      // project (1 + id + nodes (1 + edges: 20 × (1 + node (1 + id)))): a page without `first` counts as 20
      expect(((await cached.json()) as any).extensions).toEqual({ cost: { requested: 1 + 1 + 1 + 20 * 3, limit: 100_000, listSize: 20 } });
    }

    const many = await counted(() =>
      gql(s.url, `{ projects { edges { node { nodes { edges { node { links { id } } } } links { edges { node { endpoints { node { name } } } } } stats { nodes } } } } }`),
    );
    const few = await counted(() => gql(s.url, `{ projects { edges { node { id } } } }`));
    expect(many.result.errors).toBeUndefined();
    expect(many.statements).toBeLessThanOrEqual(few.statements + 8); // per level, not per project or node
  });
});
