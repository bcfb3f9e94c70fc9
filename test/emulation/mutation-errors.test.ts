import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, startTestServer, type TestServer } from "../support/server.js";
import { makeProject } from "./nodes-support.js";

/**
 * Issue 22 point 3: each mutation's result union lists only the errors its operation can raise. Through the real
 * server: the error a client gets is a member of the narrowed union (a missing member would arrive as an untyped
 * GraphQL error instead), and what the operation cannot raise is not listed.
 */
describe("emulation: a mutation's error is one its narrowed result union lists", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
  });

  const ERR = `... on Error { __typename code message }`;
  const members = async (union: string): Promise<string[]> =>
    (await gql(s.url, `query($n: String!) { __type(name: $n) { possibleTypes { name } } }`, { n: union })).data.__type.possibleTypes.map((t: { name: string }) => t.name).sort();
  const createNode = (input: Record<string, unknown>) =>
    gql(s.url, `mutation($i: CreateNodeInput!) { createNode(input: $i) { __typename ... on CreateNodePayload { node { nodeId } } ${ERR} } }`, { i: input });

  it("createLink on a closed project: ForbiddenError PROJECT_CLOSED, and no compute error is listed (a link is wired by this deployment)", async () => {
    const closed = await makeProject(s, { status: "closed" });
    const r = await gql(s.url, `mutation($i: CreateLinkInput!) { createLink(input: $i) { __typename ${ERR} } }`, { i: { projectId: closed, ends: [] } });
    expect(r.errors).toBeUndefined();
    expect(r.data.createLink).toMatchObject({ __typename: "ForbiddenError", code: "PROJECT_CLOSED" });
    expect(await members("CreateLinkResult")).toEqual(["ConflictError", "CreateLinkPayload", "ForbiddenError", "InvalidInputError", "NotFoundError"]);
  });

  it("deleteNode of an unknown node: NotFoundError, a member of its union", async () => {
    const r = await gql(s.url, `mutation($id: ID!) { deleteNode(input: { id: $id }) { __typename ${ERR} } }`, { id: randomUUID() });
    expect(r.errors).toBeUndefined();
    expect(r.data.deleteNode).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND" });
    expect(await members("DeleteNodeResult")).toEqual(["ConflictError", "DeleteNodePayload", "ForbiddenError", "InvalidInputError", "NotFoundError"]);
  });

  it("createNode: a taken console port is a ConflictError, a blank name an InvalidInputError; a remote compute's silence is listed, an upstream failure is not", async () => {
    const pid = await makeProject(s);
    const first = await createNode({ projectId: pid, name: "PC1", nodeType: "VPCS" });
    const port = (await s.ctx.db.node.findUniqueOrThrow({ where: { id: first.data.createNode.node.nodeId } })).console;
    const taken = await createNode({ projectId: pid, name: "PC2", nodeType: "VPCS", console: port });
    expect(taken.errors).toBeUndefined();
    expect(taken.data.createNode).toMatchObject({ __typename: "ConflictError", code: "CONFLICT", message: `Console port ${port} is already used by node PC1` });
    const blank = await createNode({ projectId: pid, name: "  ", nodeType: "VPCS" });
    expect(blank.errors).toBeUndefined();
    expect(blank.data.createNode).toMatchObject({ __typename: "InvalidInputError", code: "INVALID_INPUT" });
    expect(await members("CreateNodeResult")).toEqual(["ConflictError", "CreateNodePayload", "ForbiddenError", "InvalidInputError", "NotFoundError", "UnavailableError"]);
  });

  it("closeProject of an unknown project: NotFoundError; a closed project's check is not listed, its runner's silence is", async () => {
    const r = await gql(s.url, `mutation($id: ID!) { closeProject(input: { id: $id }) { __typename ${ERR} } }`, { id: randomUUID() });
    expect(r.errors).toBeUndefined();
    expect(r.data.closeProject).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND" });
    expect(await members("CloseProjectResult")).toEqual(["CloseProjectPayload", "InvalidInputError", "NotFoundError", "UnavailableError", "UpstreamError"]);
  });
});
