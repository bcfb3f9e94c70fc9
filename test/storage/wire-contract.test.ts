import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { storageFixture } from "./fixture.js";

/**
 * The ONTAP face's answers to rejected writes, word for word (status, message, code, target), recorded from the
 * REST parser before each operation took over its own input contract: the adapters may move, the wire may not.
 * Every case is rejected, so none changes state and the order does not matter.
 */
let s: TestServer;
let volumeUuid: string;
let treeRule: string;
let groupRule: string;
let multiUserRule: string;
beforeAll(async () => {
  s = await startTestServer();
  ({ volumeUuid } = await storageFixture(s.url));
  const post = async (body: object) => (await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=30&return_records=true", { "svm.name": "svm1", "volume.name": "vol1", ...body })).body.records[0].uuid as string;
  treeRule = await post({ type: "tree", "qtree.name": "qt1" });
  groupRule = await post({ type: "group", "group.name": "g1" });
  multiUserRule = await post({ type: "user", "users.name": ["u1", "u2"] });
});
afterAll(() => s.close());

const svmVol = { "svm.name": "svm1", "volume.name": "vol1" };
const RULE_POSTS: [string, unknown][] = [
  ["no type", { ...svmVol }],
  ["type not a string", { ...svmVol, type: { a: 1 } }],
  ["numeric type", { ...svmVol, type: 5 }],
  ["bad type", { ...svmVol, type: "project" }],
  ["qtree.id", { ...svmVol, type: "tree", qtree: { name: "qt1", id: 1 } }],
  ["qtree name not a string", { ...svmVol, type: "tree", qtree: { name: true } }],
  ["qtree name with control chars", { ...svmVol, type: "tree", "qtree.name": "a\u0001b" }],
  ["users on a tree rule", { ...svmVol, type: "tree", "qtree.name": "qt1", "users.name": ["x"] }],
  ["group on a user rule", { ...svmVol, type: "user", "users.name": ["x"], "group.name": "g" }],
  ["user_mapping on a group rule", { ...svmVol, type: "group", "group.name": "g", user_mapping: true }],
  ["tree rule without qtree", { ...svmVol, type: "tree" }],
  ["group rule without group", { ...svmVol, type: "group" }],
  ["group name and id", { ...svmVol, type: "group", group: { name: "g", id: "5" } }],
  ["group without name or id", { ...svmVol, type: "group", group: {} }],
  ["group not an object", { ...svmVol, type: "group", group: "g" }],
  ["group name with control chars", { ...svmVol, type: "group", "group.name": "g\u0000" }],
  ["group id not a string", { ...svmVol, type: "group", "group.id": [1] }],
  ["user rule without users", { ...svmVol, type: "user" }],
  ["empty users", { ...svmVol, type: "user", users: [] }],
  ["users not an array", { ...svmVol, type: "user", users: { name: "x" } }],
  ["users of non-objects", { ...svmVol, type: "user", users: ["x"] }],
  ["user with name and id", { ...svmVol, type: "user", users: [{ name: "a" }, { name: "b", id: "1" }] }],
  ["user with neither", { ...svmVol, type: "user", users: [{}] }],
  ["non-numeric user id", { ...svmVol, type: "user", users: [{ id: "abc" }] }],
  ["user name not a string", { ...svmVol, type: "user", users: [{ name: false }] }],
  ["user name with control chars", { ...svmVol, type: "user", "users.name": ["a\u007f"] }],
  ["default user among others", { ...svmVol, type: "user", "users.name": ["", "x"] }],
  ["unknown user field", { ...svmVol, type: "user", users: [{ name: "x", sid: "s" }] }],
  ["unknown field", { ...svmVol, type: "tree", "qtree.name": "qt1", colour: "red" }],
  ["unknown nested field", { ...svmVol, type: "tree", qtree: { name: "qt1", size: 1 } }],
  ["svm not an object", { "svm": "svm1", "volume.name": "vol1", type: "tree", "qtree.name": "qt1" }],
  ["svm name not a string", { "svm.name": ["svm1"], "volume.name": "vol1", type: "tree", "qtree.name": "qt1" }],
  ["no svm", { "volume.name": "vol1", type: "tree", "qtree.name": "qt1" }],
  ["no volume", { "svm.name": "svm1", type: "tree", "qtree.name": "qt1" }],
  ["unknown svm", { "svm.name": "nope", "volume.name": "vol1", type: "tree", "qtree.name": "qt1" }],
  ["unknown volume", { "svm.name": "svm1", "volume.name": "nope", type: "tree", "qtree.name": "qt1" }],
  ["unknown qtree", { ...svmVol, type: "tree", "qtree.name": "qt9" }],
  ["space limit not a number", { ...svmVol, type: "tree", "qtree.name": "qt1", "space.hard_limit": "ten" }],
  ["space limit a float", { ...svmVol, type: "tree", "qtree.name": "qt1", "space.soft_limit": 1.5 }],
  ["negative files limit", { ...svmVol, type: "tree", "qtree.name": "qt1", "files.hard_limit": -5 }],
  ["negative files limit as text", { ...svmVol, type: "tree", "qtree.name": "qt1", "files.soft_limit": "-2" }],
  ["limit too large", { ...svmVol, type: "tree", "qtree.name": "qt1", "files.soft_limit": "99999999999999999999" }],
  ["limit a boolean", { ...svmVol, type: "tree", "qtree.name": "qt1", "space.hard_limit": true }],
  ["space not an object", { ...svmVol, type: "tree", "qtree.name": "qt1", space: 5 }],
  ["user_mapping not a boolean", { ...svmVol, type: "user", "users.name": ["z"], user_mapping: "maybe" }],
  ["body an array", [1, 2]],
  ["body a string", "\"text\""],
  ["dotted key conflict", { ...svmVol, type: "tree", qtree: "qt1", "qtree.name": "qt1" }],
  ["empty key part", { ...svmVol, type: "tree", "qtree.": "qt1" }],
  ["duplicate rule", { ...svmVol, type: "tree", "qtree.name": "qt1" }],
];

const RULE_PATCHES: [string, () => string, unknown][] = [
  ["type", () => treeRule, { type: "group" }],
  ["qtree", () => treeRule, { "qtree.name": "qt1" }],
  ["unknown", () => treeRule, { colour: "x" }],
  ["limit not a number", () => treeRule, { "space.hard_limit": "lots" }],
  ["negative limit", () => treeRule, { files: { soft_limit: -3 } }],
  ["user_mapping on a tree rule", () => treeRule, { user_mapping: true }],
  ["user_mapping on a group rule", () => groupRule, { user_mapping: "on" }],
  ["user_mapping on with several users", () => multiUserRule, { user_mapping: true }],
  ["user_mapping not a boolean", () => multiUserRule, { user_mapping: 1 }],
  ["unknown rule", () => "00000000-0000-4000-8000-000000000000", { "space.hard_limit": 1 }],
];

const OTHER_WRITES: [string, string, () => string, unknown][] = [
  ["svm: no name", "POST", () => "/api/svm/svms", {}],
  ["svm: bad name", "POST", () => "/api/svm/svms", { name: "1bad" }],
  ["svm: name not a string", "POST", () => "/api/svm/svms", { name: { a: 1 } }],
  ["svm: unknown field", "POST", () => "/api/svm/svms", { name: "s2", colour: 1 }],
  ["svm: duplicate", "POST", () => "/api/svm/svms", { name: "svm1" }],
  ["volume: no name", "POST", () => "/api/storage/volumes", { "svm.name": "svm1" }],
  ["volume: bad name", "POST", () => "/api/storage/volumes", { "svm.name": "svm1", name: "bad-name" }],
  ["volume: no svm", "POST", () => "/api/storage/volumes", { name: "v2" }],
  ["volume: small", "POST", () => "/api/storage/volumes", { "svm.name": "svm1", name: "v2", size: 1024 }],
  ["volume: size not a number", "POST", () => "/api/storage/volumes", { "svm.name": "svm1", name: "v2", size: "big" }],
  ["volume: unknown field", "POST", () => "/api/storage/volumes", { "svm.name": "svm1", name: "v2", quota: { enabled: true } }],
  ["volume: duplicate", "POST", () => "/api/storage/volumes", { "svm.name": "svm1", name: "vol1" }],
  ["volume patch: unknown field", "PATCH", () => `/api/storage/volumes/${volumeUuid}`, { name: "x" }],
  ["volume patch: quota not a boolean", "PATCH", () => `/api/storage/volumes/${volumeUuid}`, { "quota.enabled": "maybe" }],
  ["volume patch: size not a number", "PATCH", () => `/api/storage/volumes/${volumeUuid}`, { size: "big" }],
  ["volume patch: unknown volume", "PATCH", () => "/api/storage/volumes/00000000-0000-4000-8000-000000000000", { size: 2 ** 30 }],
  ["volume patch: small", "PATCH", () => `/api/storage/volumes/${volumeUuid}`, { size: 1024 }],
  ["qtree: bad name", "POST", () => "/api/storage/qtrees", { ...svmVol, name: "a b" }],
  ["qtree: no name", "POST", () => "/api/storage/qtrees", { ...svmVol }],
  ["qtree: dot name", "POST", () => "/api/storage/qtrees", { ...svmVol, name: ".." }],
  ["qtree: bad security style", "POST", () => "/api/storage/qtrees", { ...svmVol, name: "q3", security_style: "acl" }],
  ["qtree: bad permissions", "POST", () => "/api/storage/qtrees", { ...svmVol, name: "q3", unix_permissions: 9999 }],
  ["qtree: permissions not a number", "POST", () => "/api/storage/qtrees", { ...svmVol, name: "q3", unix_permissions: "rwx" }],
  ["qtree: no volume", "POST", () => "/api/storage/qtrees", { "svm.name": "svm1", name: "q3" }],
  ["qtree: unknown field", "POST", () => "/api/storage/qtrees", { ...svmVol, name: "q3", size: 1 }],
  ["qtree: duplicate", "POST", () => "/api/storage/qtrees", { ...svmVol, name: "qt1" }],
  ["qtree patch: bad name", "PATCH", () => `/api/storage/qtrees/${volumeUuid}/1`, { name: "a/b" }],
  ["qtree patch: bad style", "PATCH", () => `/api/storage/qtrees/${volumeUuid}/1`, { security_style: 1 }],
  ["qtree patch: unknown field", "PATCH", () => `/api/storage/qtrees/${volumeUuid}/1`, { id: 3 }],
  ["qtree patch: rename onto another", "PATCH", () => `/api/storage/qtrees/${volumeUuid}/1?return_timeout=10`, { name: "qt2" }],
  ["qtree patch: bad id", "PATCH", () => `/api/storage/qtrees/${volumeUuid}/x`, { name: "q" }],
  ["qtree patch: unknown qtree", "PATCH", () => `/api/storage/qtrees/${volumeUuid}/99`, { name: "q" }],
  ["qtree delete: unknown qtree", "DELETE", () => `/api/storage/qtrees/${volumeUuid}/99`, undefined],
];

/** The answer without what differs between runs (job uuids). */
const answer = (r: { status: number; body: any }) => ({ status: r.status, error: r.body?.error, ...(r.body?.job ? { job: "…" } : {}) });

describe("ONTAP write rejections stay word for word", () => {
  it.each(RULE_POSTS)("POST quota rule: %s", async (_name, body) => {
    const r = await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=10", typeof body === "string" ? body : body);
    expect(answer(r)).toMatchSnapshot();
  });
  it.each(RULE_PATCHES)("PATCH quota rule: %s", async (_name, uuid, body) => {
    const r = await call(s.url, "PATCH", `/api/storage/quota/rules/${uuid()}?return_timeout=10`, body);
    expect(answer(r)).toMatchSnapshot();
  });
  it.each(OTHER_WRITES)("%s", async (_name, method, url, body) => {
    const r = await call(s.url, method, url(), body);
    expect(answer(r)).toMatchSnapshot();
  });
});
