import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { makeNode, makeProject } from "./nodes-support.js";

/**
 * Issue 10 item 1: a node and a link declare their input once (nodes/schema.ts, links/schema.ts). The same bad
 * value is refused on both faces — REST with GNS3's jsonschema 400, GraphQL with InvalidInputError — and writes
 * nothing. Before, GraphQL only met a hand-written subset of the REST schema (labels, adapters and styles passed).
 */
const ERR = `... on Error { __typename message }`;
const CREATE_NODE = `mutation($i: CreateNodeInput!) { createNode(input: $i) { __typename ${ERR} } }`;
const CREATE_LINK = `mutation($i: CreateLinkInput!) { createLink(input: $i) { __typename ${ERR} } }`;

describe("emulation: one input contract per operation, both faces", () => {
  let s: TestServer;
  let pid: string;
  let a: string;
  let b: string;
  beforeAll(async () => {
    s = await startTestServer();
    pid = await makeProject(s, { status: "opened" });
    a = (await makeNode(s, pid, { name: "A", node_type: "vpcs" })).node_id;
    b = (await makeNode(s, pid, { name: "B", node_type: "vpcs" })).node_id;
  });
  afterAll(() => s.close());

  /**
   * GraphQL refuses as REST does: a value its input types cannot hold (a string for an Int, a number for an object) is
   * a request error naming the field, before anything runs; a value they hold but the contract does not is the
   * mutation's InvalidInputError.
   */
  const expectRefused = (g: { data?: any; errors?: { message: string }[] }, field: string) => {
    if (g.errors) expect(g.errors[0].message).toMatch(/^Variable "\$i" got invalid value/);
    else expect(g.data[field].__typename).toBe("InvalidInputError");
  };
  const nodeCases: { what: string; rest: Record<string, unknown>; graphql: Record<string, unknown> }[] = [
    { what: "label rotation out of range", rest: { label: { text: "X", rotation: 999 } }, graphql: { label: { rotationDegrees: 999 } } },
    { what: "custom adapter that is not an object", rest: { custom_adapters: [1] }, graphql: { customAdapters: [1] } },
    { what: "node id that is not a UUID", rest: { node_id: "not-a-uuid" }, graphql: { id: "not-a-uuid" } },
    { what: "template id that is not a UUID", rest: { template_id: "abc" }, graphql: { templateId: "abc" } },
    { what: "console port out of range", rest: { console: 70000 }, graphql: { console: 70000 } },
    { what: "negative port segment size", rest: { port_segment_size: -1 }, graphql: { portSegmentSize: -1 } },
    { what: "properties that are not an object", rest: { properties: [1] }, graphql: { properties: [1] } },
  ];
  for (const c of nodeCases) {
    it(`node: ${c.what} is refused by REST and GraphQL alike`, async () => {
      const before = await s.ctx.db.node.count({ where: { projectId: pid } });
      const rest = await call(s.url, "POST", `/v2/projects/${pid}/nodes`, { compute_id: "local", name: "N", node_type: "vpcs", ...c.rest });
      expect(rest.status).toBe(400);
      expect(rest.body.message).toMatch(/^JSON schema error with API request/);
      const g = await gql(s.url, CREATE_NODE, { i: { projectId: pid, name: "N", nodeType: "VPCS", ...c.graphql } });
      expectRefused(g, "createNode");
      expect(await s.ctx.db.node.count({ where: { projectId: pid } })).toBe(before);
    });
  }

  it("node: the same valid label is stored the same way by both faces", async () => {
    const label = { style: "fill: #ff0000;", x: 1, y: -30, rotation: 90 };
    const graphqlLabel = { style: "fill: #ff0000;", x: 1, y: -30, rotationDegrees: 90 };
    const rest = await call(s.url, "POST", `/v2/projects/${pid}/nodes`, { compute_id: "local", name: "R", node_type: "vpcs", label: { text: "R", ...label } });
    expect(rest.status).toBe(201);
    const g = await gql(s.url, `mutation($i: CreateNodeInput!) { createNode(input: $i) { ... on CreateNodePayload { node { label { text style x y rotationDegrees } } } } }`, {
      i: { projectId: pid, name: "G", nodeType: "VPCS", label: graphqlLabel },
    });
    expect(rest.body.label).toEqual({ text: "R", ...label });
    expect(g.data.createNode.node.label).toEqual({ text: "G", ...graphqlLabel });
  });

  type End = { nodeId: string; adapterNumber: number; portNumber: number; label?: Record<string, unknown> };
  const end = (nodeId: string, port: number, extra: Partial<End> = {}): End => ({ nodeId, adapterNumber: 0, portNumber: port, ...extra });
  const wireEnd = (e: End) => ({ node_id: e.nodeId, adapter_number: e.adapterNumber, port_number: e.portNumber, ...(e.label ? { label: e.label } : {}) });
  /** Built when run: the node ids exist only after beforeAll. */
  const linkCases: { what: string; make: () => { rest: Record<string, unknown>; graphql: Record<string, unknown> } }[] = [
    { what: "an end whose node id is not a UUID", make: () => ({ rest: { nodes: [wireEnd(end("nope", 0)), wireEnd(end(b, 0))] }, graphql: { ends: [end("nope", 0), end(b, 0)] } }) },
    {
      what: "an end label with a non-integer position",
      make: () => ({
        rest: { nodes: [wireEnd(end(a, 0, { label: { text: "e0", x: "left" } })), wireEnd(end(b, 0))] },
        graphql: { ends: [end(a, 0, { label: { text: "e0", x: "left" } }), end(b, 0)] },
      }),
    },
    { what: "a style with a non-integer width", make: () => ({ rest: { nodes: [], link_style: { width: "thick" } }, graphql: { ends: [], linkStyle: { widthPixels: "thick" } } }) },
    { what: "an unknown filter", make: () => ({ rest: { nodes: [], filters: { jitter: [1] } }, graphql: { ends: [], filters: { jitter: [1] } } }) },
    { what: "three ends", make: () => ({ rest: { nodes: [wireEnd(end(a, 0)), wireEnd(end(b, 0)), wireEnd(end(a, 0))] }, graphql: { ends: [end(a, 0), end(b, 0), end(a, 0)] } }) },
  ];
  for (const c of linkCases) {
    it(`link: ${c.what} is refused by REST and GraphQL alike`, async () => {
      const { rest: body, graphql } = c.make();
      const rest = await call(s.url, "POST", `/v2/projects/${pid}/links`, body);
      expect(rest.status).toBe(400);
      expect(rest.body.message).toMatch(/^JSON schema error with API request/);
      const g = await gql(s.url, CREATE_LINK, { i: { projectId: pid, ...graphql } });
      expectRefused(g, "createLink");
      expect(await s.ctx.db.link.count({ where: { projectId: pid } })).toBe(0);
    });
  }
  const drawingCases: { what: string; rest: Record<string, unknown>; graphql: Record<string, unknown> }[] = [
    { what: "rotation out of range", rest: { rotation: 999 }, graphql: { rotationDegrees: 999 } },
    { what: "an id that is not a UUID", rest: { drawing_id: "d1" }, graphql: { id: "d1" } },
  ];
  for (const c of drawingCases) {
    it(`drawing: ${c.what} is refused by REST and GraphQL alike`, async () => {
      const svg = '<svg width="10" height="10"></svg>';
      const rest = await call(s.url, "POST", `/v2/projects/${pid}/drawings`, { svg, ...c.rest });
      expect(rest.status).toBe(400);
      expect(rest.body.message).toMatch(/^JSON schema error with API request/);
      const g = await gql(s.url, `mutation($i: CreateDrawingInput!) { createDrawing(input: $i) { __typename ${ERR} } }`, {
        i: { projectId: pid, svg, ...c.graphql },
      });
      expect(g.errors).toBeUndefined();
      expect(g.data.createDrawing.__typename).toBe("InvalidInputError");
      expect(await s.ctx.db.drawing.count({ where: { projectId: pid } })).toBe(0);
    });
  }
  it("project: a variable with an empty name is refused by REST and GraphQL alike", async () => {
    const before = await s.ctx.db.project.count();
    const rest = await call(s.url, "POST", "/v2/projects", { name: "contract-rest", variables: [{ name: "" }] });
    expect(rest.status).toBe(400);
    expect(rest.body.message).toMatch(/^JSON schema error with API request/);
    const g = await gql(s.url, `mutation($i: CreateProjectInput!) { createProject(input: $i) { __typename ${ERR} } }`, {
      i: { name: "contract-graphql", variables: [{ name: "" }] },
    });
    expect(g.errors).toBeUndefined();
    expect(g.data.createProject.__typename).toBe("InvalidInputError");
    expect(await s.ctx.db.project.count()).toBe(before);
  });
  it("snapshot: an empty name is refused by REST and GraphQL alike", async () => {
    const rest = await call(s.url, "POST", `/v2/projects/${pid}/snapshots`, { name: "" });
    expect(rest.status).toBe(400);
    expect(rest.body.message).toMatch(/^JSON schema error with API request/);
    const g = await gql(s.url, `mutation($p: ID!) { createSnapshot(input: { projectId: $p, name: "" }) { __typename ${ERR} } }`, { p: pid });
    expect(g.errors).toBeUndefined();
    expect(g.data.createSnapshot.__typename).toBe("InvalidInputError");
    expect(await s.ctx.db.snapshot.count({ where: { projectId: pid } })).toBe(0);
  });
});
