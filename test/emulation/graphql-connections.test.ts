import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 22 point 4, the client task "list running nodes across all projects": one root `emulatedNodes(filter:)`
 * connection, paged by cursor, through the real server — and how many requests the client makes for it.
 */
describe("GraphQL: running nodes across all projects", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s?.close());

  /** POST /graphql, counted: the requests the client task costs. */
  let requests = 0;
  const query = async (document: string, variables?: Record<string, unknown>) => {
    requests++;
    const r = await gql(s.url, document, variables);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data;
  };

  const RUNNING = `query($after: String, $first: Int) { emulatedNodes(filter: { status: [STARTED] }, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id nodeId name status nodeType project { id name } } } } }`;

  it("lists the started nodes of every project in one request, pages them by cursor, and filters by type and project", async () => {
    // Three projects: hubs are started once created (built-in devices), VPCS nodes stay stopped until started.
    const projects: Record<string, string> = {};
    const started: string[] = [];
    for (const name of ["alpha", "beta", "gamma"]) {
      const p = (await call(s.url, "POST", "/v2/projects", { name })).body.project_id as string;
      projects[name] = p;
      const node = async (nodeName: string, nodeType: string) => {
        const r = await call(s.url, "POST", `/v2/projects/${p}/nodes`, { name: nodeName, node_type: nodeType, compute_id: "local" });
        expect(r.status, r.text).toBe(201);
        return r.body as { node_id: string; status: string };
      };
      await node(`PC-${name}`, "vpcs");
      if (name !== "gamma") {
        const hub = await node(`HUB-${name}`, "ethernet_hub");
        expect(hub.status).toBe("started");
        started.push(hub.node_id);
      }
    }

    requests = 0;
    const all = (await query(RUNNING, { first: 100 })).emulatedNodes;
    expect(requests).toBe(1); // the whole task, while the running nodes fit one page (100)
    expect(all.totalCount).toBe(2);
    expect(all.pageInfo.hasNextPage).toBe(false);
    expect(nodesOf(all).map((n: any) => [n.name, n.status, n.nodeType, n.project.name])).toEqual([
      ["HUB-alpha", "STARTED", "ETHERNET_HUB", "alpha"],
      ["HUB-beta", "STARTED", "ETHERNET_HUB", "beta"],
    ]);

    // One node a page: a request per page, each naming where the next starts.
    requests = 0;
    const paged: string[] = [];
    for (let after: string | undefined, more = true; more; ) {
      const page = (await query(RUNNING, { first: 1, after })).emulatedNodes;
      expect(page.totalCount).toBe(2);
      paged.push(...nodesOf(page).map((n: any) => n.nodeId));
      ({ hasNextPage: more, endCursor: after } = page.pageInfo);
    }
    expect(requests).toBe(2);
    expect(paged).toEqual(started);

    // Typed filters: by type across projects, by project, and the stopped ones of one project.
    const byType = (await query(`{ emulatedNodes(filter: { nodeType: [VPCS] }) { totalCount edges { node { name } } } }`)).emulatedNodes;
    expect(nodesOf(byType).map((n: any) => n.name)).toEqual(["PC-alpha", "PC-beta", "PC-gamma"]);
    const ofBeta = (await query(`query($p: ID!) { emulatedNodes(filter: { project: $p }) { totalCount } }`, { p: projects.beta })).emulatedNodes;
    expect(ofBeta.totalCount).toBe(2);
    const stopped = (await query(`query($p: ID!) { project(id: $p) { nodes(filter: { status: [STOPPED] }) { totalCount edges { node { name } } } } }`, { p: projects.beta })).project
      .nodes;
    expect(stopped).toEqual({ totalCount: 1, edges: [{ node: { name: "PC-beta" } }] });
  });

  it("counts a page inside a result union by its first", async () => {
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ images(type: QEMU, first: 3) { ... on QueryImagesConnection { edges { node { filename } } } } }` }),
    });
    // images (1 + edges: 3 × (1 + node (1 + filename))), the connection reached through its fragment
    expect(((await res.json()) as any).extensions.cost.requested).toBe(1 + 3 * 3);
  });

  it("refuses a page above 100 as a typed error, and a cursor no page gave as a client error", async () => {
    const r = await gql(s.url, `{ emulatedNodes(first: 101) { totalCount } }`);
    expect(r.data).toBeUndefined();
    expect(r.errors?.[0]).toMatchObject({ extensions: { code: "EXCESSIVE_PAGINATION", argument: "first", requested: 101, maximum: 100 } });
    const bad = await gql(s.url, `{ emulatedNodes(first: 1, after: "not a cursor") { totalCount } }`);
    expect(bad.errors?.[0].message).not.toBe("Unexpected error.");
  });
});
