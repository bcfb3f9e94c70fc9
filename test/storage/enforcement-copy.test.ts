import { expect, it } from "vitest";
import { call, type TestServer } from "../support/server.js";
import { postRule, serverWithFixture } from "./fixture.js";

/**
 * The enforced copy is rewritten inside the database (one INSERT … SELECT per resize, SQLite and PostgreSQL
 * dialects): reports keep the rules' creation order and each rule's users in their order, names and ids alike.
 */
let s: TestServer;
let volumeUuid: string;
serverWithFixture((server, fixture) => ((s = server), ({ volumeUuid } = fixture)));

const reports = async () =>
  ((await call(s.url, "GET", `/api/storage/quota/reports?volume.uuid=${volumeUuid}&fields=index,type,users,group,qtree,space`)).body.records as any[])
    .sort((a, b) => a.index - b.index);

it("copies rules in creation order with their users in order, on quota on and on every resize", async () => {
  expect((await postRule(s.url, { type: "user", users: [{ name: "zed" }, { name: "amy" }, { id: "501" }], "space.hard_limit": 1024 })).status).toBe(201);
  expect((await postRule(s.url, { type: "group", group: { name: "staff" }, qtree: { name: "qt1" } })).status).toBe(201);
  const on = await call(s.url, "PATCH", `/api/storage/volumes/${volumeUuid}?return_timeout=30`, { "quota.enabled": true });
  expect(on.status, on.text).toBe(200);
  const first = await reports();
  expect(first.map((r) => r.index)).toEqual(first.map((_, i) => i));
  const multi = first.find((r) => r.users?.length === 3);
  expect(multi.users).toEqual([{ name: "zed" }, { name: "amy" }, { id: "501" }]);
  expect(multi.space.hard_limit).toBe(1024);
  expect(first.find((r) => r.group?.name === "staff").qtree.name).toBe("qt1");

  // A resize after a change: the copy follows, still in creation order, the newest rule last.
  expect((await postRule(s.url, { type: "user", users: [{ name: "last" }] })).status).toBe(201);
  const after = await reports();
  expect(after).toHaveLength(first.length + 1);
  expect(after.at(-1).users).toEqual([{ name: "last" }]);
  expect(after.slice(0, -1).map((r) => r.users ?? r.group)).toEqual(first.map((r) => r.users ?? r.group));
});
