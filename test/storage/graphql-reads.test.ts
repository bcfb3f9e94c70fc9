import { describe, expect, it } from "vitest";
import { call, gql, nodesOf, type TestServer } from "../support/server.js";
import { postRule, serverWithFixture, storageFixture } from "./fixture.js";

/**
 * The ONTAP reads of one object (and the qtree and cluster collections) through GraphQL over HTTP, against REST's
 * answer for the same object; where REST answers 404, a lookup answers null.
 */
let s: TestServer;
let fixture: Awaited<ReturnType<typeof storageFixture>>;
serverWithFixture((server, f) => {
  s = server;
  fixture = f;
});

async function field(name: string, document: string, variables: Record<string, unknown> = {}) {
  const r = await gql(s.url, document, variables);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data[name];
}
const MISSING = "00000000-0000-4000-8000-000000000000";
/** REST's answer to a read of what does not exist: 404, where the GraphQL lookup answers null. */
const restNotFound = async (url: string) => expect((await call(s.url, "GET", url)).status).toBe(404);

describe("GraphQL parity: ONTAP reads", () => {
  it("cluster answers as GET /api/cluster", async () => {
    const r = await gql(s.url, `{ cluster { name uuid version { full generation major minor } } }`);
    const rest = (await call(s.url, "GET", "/api/cluster")).body;
    expect(r.data.cluster).toEqual({ name: rest.name, uuid: rest.uuid, version: rest.version });
  });

  it("svm answers as GET /api/svm/svms/{uuid}; an unknown uuid, REST's 404, is null", async () => {
    const SVM = `query($u: ID!) { svm(id: $u) { uuid name volumes { totalCount edges { node { name } } } } }`;
    expect(await field("svm", SVM, { u: fixture.svmUuid })).toEqual({ uuid: fixture.svmUuid, name: "svm1", volumes: { totalCount: 1, edges: [{ node: { name: "vol1" } }] } });
    await restNotFound(`/api/svm/svms/${MISSING}`);
    expect(await field("svm", SVM, { u: MISSING })).toBeNull();
  });

  it("qtrees and qtree answer as GET /api/storage/qtrees[/{volume}/{id}]", async () => {
    const rest = (await call(s.url, "GET", `/api/storage/qtrees?volume.uuid=${fixture.volumeUuid}&fields=name,security_style,unix_permissions`)).body.records;
    const all = await gql(s.url, `query($v: ID) { qtrees(volumeId: $v) { edges { node { qtreeId name securityStyle unixPermissions volume { uuid } } } } }`, { v: fixture.volumeUuid });
    expect(nodesOf(all.data.qtrees)).toEqual(
      rest.map((q: any) => ({ qtreeId: q.id, name: q.name, securityStyle: q.security_style.toUpperCase(), unixPermissions: q.unix_permissions, volume: { uuid: fixture.volumeUuid } })),
    );
    expect(nodesOf(all.data.qtrees).map((q: { name: string }) => q.name)).toEqual(["qt1", "qt2"]);

    const QTREE = `query($id: ID!) { qtree(id: $id) { qtreeId name } }`;
    const first = rest[0];
    const key = (id: number) => `${fixture.volumeUuid}/${id}`; // a qtree's domain id, as REST's path addresses it
    expect(await field("qtree", QTREE, { id: key(first.id) })).toEqual({ qtreeId: first.id, name: first.name });
    await restNotFound(`/api/storage/qtrees/${fixture.volumeUuid}/999`);
    expect(await field("qtree", QTREE, { id: key(999) })).toBeNull();
  });

  it("quotaReport answers as GET /api/storage/quota/reports/{volume}/{index}", async () => {
    expect((await postRule(s.url, { type: "tree", "qtree.name": "qt1", "files.hard_limit": "40" })).status).toBe(201);
    const on = await call(s.url, "PATCH", `/api/storage/volumes/${fixture.volumeUuid}?return_timeout=30`, { "quota.enabled": true });
    expect(on.status, on.text).toBe(200);
    const reports = (await call(s.url, "GET", `/api/storage/quota/reports?volume.uuid=${fixture.volumeUuid}&qtree.name=qt1&type=tree`)).body.records;
    expect(reports).toHaveLength(1);
    const REPORT = `query($v: ID!, $i: Int!) { quotaReport(volumeId: $v, index: $i) { index type qtreeName filesHardLimit volume { uuid } } }`;
    expect(await field("quotaReport", REPORT, { v: fixture.volumeUuid, i: reports[0].index })).toEqual({
      index: reports[0].index,
      type: "TREE",
      qtreeName: "qt1",
      filesHardLimit: 40,
      volume: { uuid: fixture.volumeUuid },
    });
    await restNotFound(`/api/storage/quota/reports/${fixture.volumeUuid}/123456`);
    expect(await field("quotaReport", REPORT, { v: fixture.volumeUuid, i: 123456 })).toBeNull();
  });
});
