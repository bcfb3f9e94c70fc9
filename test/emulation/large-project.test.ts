import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { allPages, gql, startTestServer, type TestServer } from "../support/server.js";

/**
 * A project past SQLite's historical 999 bind parameters reads in one GraphQL request: relations load in a fixed
 * number of statements (Prisma's relation IN-lists once overflowed, and per-object loaders made it N+1).
 */
let s: TestServer;
beforeAll(async () => void (s = await startTestServer()));
afterAll(() => s.close());

it("reads a project of 1,200 nodes and 600 links with every endpoint's node", async () => {
  const projectId = randomUUID();
  await s.ctx.db.project.create({ data: { id: projectId, name: "large", filename: "large.gns3" } });
  const nodes = Array.from({ length: 1200 }, (_, i) => ({ id: randomUUID(), projectId, nodeType: "vpcs", name: `PC${i + 1}` }));
  await s.ctx.db.node.createMany({ data: nodes });
  const links = Array.from({ length: 600 }, () => ({ id: randomUUID(), projectId }));
  await s.ctx.db.link.createMany({ data: links });
  await s.ctx.db.linkEndpoint.createMany({
    data: links.flatMap((l, i) => [
      { linkId: l.id, position: 0, nodeId: nodes[2 * i].id, adapterNumber: 0, portNumber: 0 },
      { linkId: l.id, position: 1, nodeId: nodes[2 * i + 1].id, adapterNumber: 0, portNumber: 0 },
    ]),
  });
  // Read a page (of 100, the most) at a time, as a client does.
  const page = (field: string, selection: string) => async (after: string | undefined) => {
    const r = await gql(s.url, `query($id: ID!, $after: String) { project(id: $id) { ${field}(first: 100, after: $after) { pageInfo { hasNextPage endCursor } edges { node { ${selection} } } } } }`, { id: projectId, after });
    expect(r.errors).toBeUndefined();
    return r.data.project[field];
  };
  expect(await allPages(page("nodes", "id ports { name }"))).toHaveLength(1200);
  const listed = await allPages(page("links", "linkId endpoints { node { name } }"));
  expect(listed).toHaveLength(600);
  const expected = new Map(links.map((l, i) => [l.id, [`PC${2 * i + 1}`, `PC${2 * i + 2}`]]));
  for (const l of listed) expect(l.endpoints.map((e: any) => e.node.name)).toEqual(expected.get(l.linkId));
});
