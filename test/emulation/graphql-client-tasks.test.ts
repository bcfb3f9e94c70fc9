import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

/**
 * Issue 22's client task "build and start a 3-node lab in one request and see its nodes' status in the answer",
 * through the real server (on PostgreSQL too, with TEST_DATABASE_URL), counting the client's HTTP requests. The
 * other client tasks of the issue are counted where their details are tested: "list running nodes across all
 * projects" in graphql-connections.test.ts, "upload a file to a node and download it" in graphql-files.test.ts,
 * "keep a local model of a project in sync" in graphql-event-sync.test.ts.
 *
 * The lab is one mutation document: root mutation fields run one after another, in document order, so each
 * alias may use what an earlier one made — the ids the client chose for the project, nodes and links.
 */
const LAB = `mutation($p: ID!, $pc1: ID!, $pc2: ID!, $sw1: ID!, $l1: ID!, $l2: ID!) {
  project: createProject(input: { id: $p, name: "three-node-lab" }) { __typename ... on CreateProjectPayload { project { id projectId status } } ...E }
  pc1: createNode(input: { projectId: $p, id: $pc1, name: "PC1", nodeType: VPCS }) { __typename ...N ...E }
  pc2: createNode(input: { projectId: $p, id: $pc2, name: "PC2", nodeType: VPCS }) { __typename ...N ...E }
  sw1: createNode(input: { projectId: $p, id: $sw1, name: "SW1", nodeType: ETHERNET_SWITCH }) { __typename ...N ...E }
  l1: createLink(input: { projectId: $p, id: $l1, ends: [{ nodeId: $pc1, adapterNumber: 0, portNumber: 0 }, { nodeId: $sw1, adapterNumber: 0, portNumber: 0 }] }) {
    __typename ... on CreateLinkPayload { link { linkId } } ...E }
  l2: createLink(input: { projectId: $p, id: $l2, ends: [{ nodeId: $pc2, adapterNumber: 0, portNumber: 0 }, { nodeId: $sw1, adapterNumber: 0, portNumber: 1 }] }) {
    __typename ... on CreateLinkPayload { link { linkId } } ...E }
  start: projectNodesAction(input: { projectId: $p, action: START }) {
    __typename ... on ProjectNodesActionPayload { project { nodes { totalCount edges { node { id nodeId name status console links { linkId } } } } } } ...E }
}
fragment N on CreateNodePayload { node { id nodeId name status } }
fragment E on Error { code message target }`;

describe.skipIf(!toolAvailable("vpcs", findVpcs() !== null))("GraphQL client task: a 3-node lab built and started in one request (requires the vpcs package)", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s?.close());

  it("creates the project, PC1, PC2, SW1 and two links with ids of its choosing, starts them, and sees every node STARTED in the answer", async () => {
    const ids = { p: randomUUID(), pc1: randomUUID(), pc2: randomUUID(), sw1: randomUUID(), l1: randomUUID(), l2: randomUUID() };
    let requests = 0;
    requests++;
    const r = await gql(s.url, LAB, ids);
    expect(requests).toBe(1); // the whole task
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const d = r.data;
    expect(Object.entries(d).map(([alias, v]: [string, any]) => [alias, v.__typename]), JSON.stringify(d)).toEqual([
      ["project", "CreateProjectPayload"],
      ["pc1", "CreateNodePayload"],
      ["pc2", "CreateNodePayload"],
      ["sw1", "CreateNodePayload"],
      ["l1", "CreateLinkPayload"],
      ["l2", "CreateLinkPayload"],
      ["start", "ProjectNodesActionPayload"],
    ]);
    expect(d.project.project).toMatchObject({ projectId: ids.p, status: "OPENED" });
    expect([d.pc1.node.nodeId, d.pc2.node.nodeId, d.sw1.node.nodeId]).toEqual([ids.pc1, ids.pc2, ids.sw1]);
    expect([d.l1.link.linkId, d.l2.link.linkId]).toEqual([ids.l1, ids.l2]);

    // The answer's nodes are the created ones (same global ids, for a client's cache), each STARTED, each wired.
    const nodes = nodesOf(d.start.project.nodes);
    expect(d.start.project.nodes.totalCount).toBe(3);
    expect(nodes.map((n: any) => [n.id, n.nodeId, n.name, n.status])).toEqual([
      [d.pc1.node.id, ids.pc1, "PC1", "STARTED"],
      [d.pc2.node.id, ids.pc2, "PC2", "STARTED"],
      [d.sw1.node.id, ids.sw1, "SW1", "STARTED"],
    ]);
    expect(nodes.map((n: any) => n.links.map((l: any) => l.linkId))).toEqual([[ids.l1], [ids.l2], [ids.l1, ids.l2]]);
    for (const pc of nodes.slice(0, 2)) expect(pc.console).toEqual(expect.any(Number));

    // Not part of the task: the server agrees (the emulators run), and the same document again is refused
    // at its first mutation, by the one rule for a repeated client-chosen id, without changing anything.
    const rest = await call(s.url, "GET", `/v2/projects/${ids.p}/nodes`);
    expect(rest.body.map((n: any) => n.status)).toEqual(["started", "started", "started"]);
    const again = (await gql(s.url, LAB, ids)).data;
    expect(again.project).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS", target: "id" });
    expect(again.pc1).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS" });
    expect(again.l1).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS" });
    expect((await call(s.url, "GET", `/v2/projects/${ids.p}/nodes`)).body).toHaveLength(3);

    const stop = await gql(s.url, `mutation($p: ID!) { projectNodesAction(input: { projectId: $p, action: STOP }) { __typename } }`, { p: ids.p });
    expect(stop.data.projectNodesAction.__typename).toBe("ProjectNodesActionPayload");
  });
});
