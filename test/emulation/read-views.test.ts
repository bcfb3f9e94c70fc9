import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisUp, useInstancePair } from "../support/redis.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 11: the nodes and links lists are served from read views kept in memory and dropped by the events every
 * write publishes. They must never show a write's answer before its effect: a read after an acknowledged write on
 * the same instance sees it; another instance (same database, events over Redis) sees it once the event arrives.
 */
const nodes = async (s: TestServer, pid: string) => (await call(s.url, "GET", `/v2/projects/${pid}/nodes`)).body as any[];
const links = async (s: TestServer, pid: string) => (await call(s.url, "GET", `/v2/projects/${pid}/links`)).body as any[];

describe("read views: one instance", () => {
  let s: TestServer;
  let pid: string;
  beforeAll(async () => {
    s = await startTestServer();
    pid = (await call(s.url, "POST", "/v2/projects", { name: "views", auto_close: false })).body.project_id;
  });
  afterAll(() => s.close());

  it("every acknowledged write is in the next list, while reads run concurrently with the writes", async () => {
    const P = `/v2/projects/${pid}`;
    let reading = true;
    // Readers keep the views warm (and racing) the whole time.
    const readers = Array.from({ length: 4 }, async () => {
      while (reading) await nodes(s, pid);
    });
    const made: string[] = [];
    for (let i = 0; i < 25; i++) {
      const r = await call(s.url, "POST", `${P}/nodes`, { name: `PC${i + 1}`, node_type: "vpcs", compute_id: "local" });
      expect(r.status).toBe(201);
      made.push(r.body.node_id);
      expect((await nodes(s, pid)).map((n) => n.node_id)).toEqual(made);
      const moved = await call(s.url, "PUT", `${P}/nodes/${r.body.node_id}`, { x: i * 10 });
      expect(moved.status).toBe(200);
      expect((await nodes(s, pid)).at(-1).x).toBe(i * 10);
    }
    const link = await call(s.url, "POST", `${P}/links`, { nodes: [{ node_id: made[0], adapter_number: 0, port_number: 0 }, { node_id: made[1], adapter_number: 0, port_number: 0 }] });
    expect((await links(s, pid)).map((l) => l.link_id)).toEqual([link.body.link_id]);
    await call(s.url, "DELETE", `${P}/nodes/${made[0]}`);
    expect((await links(s, pid))).toEqual([]);
    expect((await nodes(s, pid)).map((n) => n.node_id)).toEqual(made.slice(1));
    reading = false;
    await Promise.all(readers);
  });

  it("a list's ETag is Express's for its bytes (kept with the view, not hashed per hit), and a match is a 304", async () => {
    const { createHash } = await import("node:crypto");
    const p = (await call(s.url, "POST", "/v2/projects", { name: "views-etag" })).body.project_id;
    await call(s.url, "POST", `/v2/projects/${p}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });
    for (const list of ["nodes", "links"]) {
      const url = `${s.url}/v2/projects/${p}/${list}`;
      const first = await fetch(url);
      const bytes = Buffer.from(await first.arrayBuffer());
      const tag = first.headers.get("etag");
      expect(tag).toBe(`W/"${bytes.length.toString(16)}-${createHash("sha1").update(bytes).digest("base64").slice(0, 27)}"`);
      expect((await fetch(url)).headers.get("etag")).toBe(tag); // a hit
      // fetch adds "Cache-Control: no-cache" to a conditional request (which asks for a full answer) unless told otherwise.
      expect((await fetch(url, { headers: { "If-None-Match": tag!, "Cache-Control": "max-age=0" } })).status).toBe(304);
    }
    const before = (await fetch(`${s.url}/v2/projects/${p}/nodes`)).headers.get("etag");
    await call(s.url, "POST", `/v2/projects/${p}/nodes`, { name: "PC2", node_type: "vpcs", compute_id: "local" });
    const after = await fetch(`${s.url}/v2/projects/${p}/nodes`, { headers: { "If-None-Match": before!, "Cache-Control": "max-age=0" } });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(before);
  });

  it("a kept GraphQL answer is sent as the same text on every hit (cost included), and a write moves it", async () => {
    const p = (await call(s.url, "POST", "/v2/projects", { name: "views-graphql" })).body.project_id;
    await call(s.url, "POST", `/v2/projects/${p}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });
    const ask = async () => {
      const r = await fetch(`${s.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "query($id: ID!) { project(id: $id) { id nodes { edges { node { name ports { name } } } } } }", variables: { id: p } }),
      });
      expect(r.status).toBe(200);
      return r.text();
    };
    const [miss, hit, again] = [await ask(), await ask(), await ask()];
    expect(JSON.parse(miss).extensions.cost.requested).toBeGreaterThan(0);
    expect(hit).toBe(miss);
    expect(again).toBe(miss);
    await call(s.url, "POST", `/v2/projects/${p}/nodes`, { name: "PC2", node_type: "vpcs", compute_id: "local" });
    const [moved, movedHit] = [await ask(), await ask()];
    expect(JSON.parse(moved).data.project.nodes.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(["PC1", "PC2"]);
    expect(movedHit).toBe(moved);
  });

  it("the list follows the project: closed (topology form), reopened, deleted (404)", async () => {
    const p = (await call(s.url, "POST", "/v2/projects", { name: "views-life" })).body.project_id;
    await call(s.url, "POST", `/v2/projects/${p}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });
    expect((await nodes(s, p))[0]).toHaveProperty("status", "stopped");
    await call(s.url, "POST", `/v2/projects/${p}/close`);
    expect((await nodes(s, p))[0]).not.toHaveProperty("status"); // a closed project lists its topology file's form
    await call(s.url, "POST", `/v2/projects/${p}/open`);
    expect((await nodes(s, p))[0]).toHaveProperty("status", "stopped");
    expect((await call(s.url, "DELETE", `/v2/projects/${p}`)).status).toBe(204);
    expect((await call(s.url, "GET", `/v2/projects/${p}/nodes`)).status).toBe(404);
  });
});

describe.skipIf(!redisUp)("read views: two instances sharing the database and Redis", () => {
  const pair = useInstancePair();
  it("a write on B reaches A's list as soon as its event arrives; A's own writes at once", async () => {
    const { a, b } = pair;
    const pid = (await call(a.url, "POST", "/v2/projects", { name: "views-shared", auto_close: false })).body.project_id;
    const P = `/v2/projects/${pid}`;
    expect(await nodes(a, pid)).toEqual([]); // A keeps an empty view
    const made = (await call(b.url, "POST", `${P}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body;
    expect(await nodes(b, pid)).toHaveLength(1); // the writer's instance: at once
    await waitFor(async () => (await nodes(a, pid)).length === 1, 5000, "B's node in A's list");
    await call(b.url, "PUT", `${P}/nodes/${made.node_id}`, { name: "Renamed" });
    await waitFor(async () => (await nodes(a, pid))[0].name === "Renamed", 5000, "B's rename in A's list");
    // The writer's own instance never waits for Redis to bring its event back.
    for (let x = 1; x <= 20; x++) {
      await call(a.url, "PUT", `${P}/nodes/${made.node_id}`, { x });
      expect((await nodes(a, pid))[0].x).toBe(x);
    }
  });
});

describe("GraphQL read cache", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());
  const TOPOLOGY = `name nodes { edges { node { id name x status } } } links { edges { node { id suspend } } }`;
  const Q = `query($id: ID!) { project(id: $id) { ${TOPOLOGY} snapshots { edges { node { name } } } } }`;
  const CACHED = `query($id: ID!) { project(id: $id) { ${TOPOLOGY} } }`;

  it("a query answered from memory shows every acknowledged write, REST or GraphQL; uncovered fields are never cached", async () => {
    const pid = (await call(s.url, "POST", "/v2/projects", { name: "cached", auto_close: false })).body.project_id;
    const P = `/v2/projects/${pid}`;
    const read = async (q = CACHED) => (await gql(s.url, q, { id: pid })).data.project;
    expect(await read()).toEqual({ name: "cached", nodes: { edges: [] }, links: { edges: [] } });
    for (let i = 1; i <= 10; i++) {
      const n = (await call(s.url, "POST", `${P}/nodes`, { name: `PC${i}`, node_type: "vpcs", compute_id: "local" })).body;
      expect(nodesOf((await read()).nodes).map((x: any) => x.name)).toHaveLength(i);
      await gql(s.url, `mutation($n: ID!, $x: Int!) { updateNode(input: { id: $n, x: $x }) { __typename } }`, { n: n.node_id, x: i });
      expect(nodesOf((await read()).nodes).at(-1)).toMatchObject({ name: `PC${i}`, x: i });
    }
    await call(s.url, "PUT", P, { name: "renamed" });
    expect((await read()).name).toBe("renamed");
    // Snapshots are created without an event: a query that reads them is executed every time.
    expect(nodesOf((await read(Q)).snapshots)).toEqual([]);
    await call(s.url, "POST", `${P}/snapshots`, { name: "s1" });
    expect(nodesOf((await read(Q)).snapshots)).toEqual([{ name: "s1" }]);
  });
});
