import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 22's rule for reads by id, through the server: a lookup answers the entity or null when nothing has that
 * id — unknown, malformed, or another type's — never an error for absence; only a refusal is a typed error.
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const LOOKUPS = ["project", "emulatedNode", "link", "drawing", "template", "compute", "svm", "volume", "qtree", "quotaRule", "job"];

/** The lookup's answer, after checking the request raised no GraphQL error. */
async function lookup(field: string, id: string, selection = "__typename") {
  const r = await gql(s.url, `query($id: ID!) { ${field}(id: $id) { ${selection} } }`, { id });
  expect(r.errors, `${field}(id: ${id})`).toBeUndefined();
  return r.data[field];
}

describe("lookups by id", () => {
  it("answer null for an unknown id, a malformed one and another type's", async () => {
    const ids = [randomUUID(), "not an id/..", globalId("Snapshot", randomUUID()), globalId("NoSuchType", "x")];
    for (const field of LOOKUPS) for (const id of ids) expect(await lookup(field, id), `${field}(id: ${id})`).toBeNull();
  });

  it("node(id:) and nodes(ids:) answer null for a deleted entity, a global id of no entity type and a string that is no global id", async () => {
    const project = (await call(s.url, "POST", "/v2/projects", { name: "gone" })).body.project_id as string;
    expect((await call(s.url, "DELETE", `/v2/projects/${project}`)).status).toBe(204);
    const absent = [globalId("Project", project), globalId("NoSuchType", "x"), project];
    for (const id of absent) expect(await lookup("node", id), `node(id: ${id})`).toBeNull();
    const r = await gql(s.url, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename } }`, { ids: [...absent, globalId("Compute", "local")] });
    expect(r.errors).toBeUndefined();
    expect(r.data.nodes).toEqual([null, null, null, { __typename: "Compute" }]);
  });

  it("a node or drawing of a closed project is refused (ForbiddenError), not absent", async () => {
    const project = (await call(s.url, "POST", "/v2/projects", { name: "closed" })).body.project_id as string;
    const node = (await call(s.url, "POST", `/v2/projects/${project}/nodes`, { name: "HUB1", node_type: "ethernet_hub", compute_id: "local" })).body.node_id as string;
    const drawing = (await call(s.url, "POST", `/v2/projects/${project}/drawings`, { svg: "<svg></svg>" })).body.drawing_id as string;
    expect(await lookup("emulatedNode", node, "__typename ... on EmulatedNode { name }")).toEqual({ __typename: "EmulatedNode", name: "HUB1" });
    expect((await call(s.url, "POST", `/v2/projects/${project}/close`)).status).toBe(204);
    const refused = { __typename: "ForbiddenError", code: "PROJECT_CLOSED" };
    expect(await lookup("emulatedNode", node, "__typename ... on Error { code }")).toEqual(refused);
    expect(await lookup("drawing", drawing, "__typename ... on Error { code }")).toEqual(refused);
  });
});
