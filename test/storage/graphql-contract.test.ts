import { describe, expect, it } from "vitest";
import { call, gql, type TestServer } from "../support/server.js";
import { serverWithFixture } from "./fixture.js";

/** GraphQL meets each storage operation's own input contract: GraphQL field names in errors, jobs in domain terms. */
let s: TestServer;
let volumeUuid: string;
serverWithFixture((server, fixture) => ((s = server), ({ volumeUuid } = fixture)));

const create = (input: object) =>
  gql(
    s.url,
    `mutation($input: CreateQuotaRuleInput!) { createQuotaRule(input: $input) { __typename ... on Error { message code ontapCode target } } }`,
    { input: { svm: { name: "svm1" }, volume: { name: "vol1" }, ...input } },
  );

describe("storage GraphQL: one contract per operation", () => {
  const ERR = "... on Error { message code ontapCode target }";

  it("names GraphQL fields in input errors, never the ONTAP body's (space.hard_limit)", async () => {
    const negative = await create({ type: "TREE", qtreeName: "qt1", limits: { spaceHardLimitBytes: -5 } });
    expect(negative.data!.createQuotaRule).toMatchObject({ __typename: "InvalidInputError", code: "INVALID_INPUT", ontapCode: "262185", target: "limits.spaceHardLimitBytes" });
    expect(negative.data!.createQuotaRule.message).toMatch(/"limits\.spaceHardLimitBytes"/);
    const mapping = await create({ type: "GROUP", group: { name: "g" }, limits: { userMapping: true } });
    expect(mapping.data!.createQuotaRule).toMatchObject({ target: "limits.userMapping", message: '"limits.userMapping" is only valid for user rules.' });
    const tree = await create({ type: "TREE" });
    expect(tree.data!.createQuotaRule).toMatchObject({ ontapCode: "262186", target: "qtreeName", message: 'Missing required field "qtreeName".' });
    const qtree = await create({ type: "TREE", qtreeName: "nope" });
    expect(qtree.data!.createQuotaRule).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND", target: "qtreeName" });
    const tooBig = await gql(s.url, `mutation { updateQuotaRule(input: { id: "x", limits: { filesHardLimit: "99999999999999999999" } }) { __typename ${ERR} } }`);
    expect(tooBig.data!.updateQuotaRule).toMatchObject({ __typename: "InvalidInputError", target: "limits.filesHardLimit" });
  });

  it("answers bad connection arguments as the client's mistake, and an integer out of range with the range", async () => {
    const page = async (args: string) => (await gql(s.url, `{ quotaRules(${args}) { edges { node { uuid } } } }`)).errors?.map((e: any) => [e.message, e.extensions.code]);
    expect(await page("first: -1")).toEqual([['Argument "first" must be a non-negative integer', "BAD_USER_INPUT"]]);
    expect(await page("last: -1")).toEqual([['Argument "last" must be a non-negative integer', "BAD_USER_INPUT"]]);
    const cursor = "Invalid cursor: use a cursor this connection returned (edges.cursor, pageInfo.startCursor or endCursor)";
    for (const garbage of ['after: "!!!garbage"', 'before: "!!!garbage"', 'after: "R1BDOmZvbw"', 'after: ""']) {
      expect(await page(garbage), garbage).toEqual([[cursor, "BAD_USER_INPUT"]]);
    }
    const range = "an integer from -9223372036854775808 to 9223372036854775807";
    const volume = (size: string) => gql(s.url, `mutation { createVolume(input: { svm: { name: "svm1" }, name: "big", sizeBytes: ${size} }) { __typename ${ERR} } }`);
    // Literals are read from their digits: through a JS number, -9223372036854775809 would round into the range.
    for (const size of ["1000000000000000000000000", '"1000000000000000000000000"', "9223372036854775808", "-9223372036854775809"]) {
      expect((await volume(size)).data!.createVolume, size).toEqual({ __typename: "InvalidInputError", message: `Invalid value for field "sizeBytes": expected ${range}.`, code: "INVALID_INPUT", ontapCode: "262185", target: "sizeBytes" });
    }
    const rest = await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=30", {
      svm: { name: "svm1" }, volume: { name: "vol1" }, type: "tree", qtree: { name: "qt1" }, files: { hard_limit: "99999999999999999999" },
    });
    expect([rest.status, rest.body.error.message]).toEqual([400, `Invalid value for field "files.hard_limit": expected ${range}.`]);
  });

  it("renames and deletes qtrees through their job: typed errors from the job, same rules as REST", async () => {
    const RENAME = `mutation($id: ID!, $name: String!) { renameQtree(input: { id: $id, name: $name }) { __typename ... on RenameQtreePayload { qtree { name } job { state } } ${ERR} } }`;
    const qt2 = `${volumeUuid}/2`; // a qtree's domain id: its volume's uuid and its number (the global id works too)
    const taken = await gql(s.url, RENAME, { id: qt2, name: "qt1" });
    expect(taken.data!.renameQtree).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS", ontapCode: "5308547", target: "name" });
    const bad = await gql(s.url, RENAME, { id: qt2, name: "a/b" });
    expect(bad.data!.renameQtree).toMatchObject({ __typename: "InvalidInputError", message: 'Invalid qtree name "a/b".', target: "name" });
    const ok = await gql(s.url, RENAME, { id: qt2, name: "qt2b" });
    expect(ok.data!.renameQtree).toMatchObject({ qtree: { name: "qt2b" }, job: { state: "SUCCESS" } });
    const back = await gql(s.url, RENAME, { id: qt2, name: "qt2" });
    expect(back.data!.renameQtree.qtree).toEqual({ name: "qt2" });
    const gone = await gql(s.url, `mutation($id: ID!) { deleteQtree(input: { id: $id }) { __typename ${ERR} } }`, { id: `${volumeUuid}/99` });
    expect(gone.data!.deleteQtree).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND", ontapCode: "4" });
  });

  it("describes jobs in domain terms; the ONTAP face shows the same job as its request line", async () => {
    expect((await create({ type: "TREE", qtreeName: "qt1" })).data!.createQuotaRule.__typename).toBe("CreateQuotaRulePayload");
    const r = await gql(s.url, `mutation($v: ID!) { setVolumeQuota(input: { id: $v, enabled: true }) { ... on SetVolumeQuotaPayload { job { uuid description state } } } }`, { v: volumeUuid });
    const job = r.data!.setVolumeQuota.job;
    expect(job).toMatchObject({ description: `update volume ${volumeUuid}`, state: "SUCCESS" });
    const rest = await call(s.url, "GET", `/api/cluster/jobs/${job.uuid}`);
    expect(rest.body.description).toBe(`PATCH /api/storage/volumes/${volumeUuid}`);
  });
});
