import { describe, expect, it } from "vitest";
import { redisUp, useInstancePair } from "../support/redis.js";
import { call, gql, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";
import { postRule, serverWithFixture, storageFixture } from "./fixture.js";

/**
 * Issue 11: quota rule pages (REST and GraphQL) are answered from memory until a storage change is published.
 * Every acknowledged write is in the next page on the same instance; on another instance once its event arrives.
 */
const PAGE = "/api/storage/quota/rules?svm.name=svm1&fields=uuid,type,qtree,users,space&max_records=50";
const GQL = `{ quotaRules(first: 50, filter: { svmName: { eq: "svm1" } }) { edges { node { uuid type qtreeName users { name } spaceHardLimitBytes volume { name } } } } }`;

const restPage = async (s: TestServer) => (await call(s.url, "GET", PAGE)).body.records as any[];
const gqlPage = async (s: TestServer) => (await gql(s.url, GQL)).data.quotaRules.edges.map((e: any) => e.node) as any[];

describe("quota rule pages: one instance", () => {
  let s: TestServer;
  let volumeUuid: string;
  serverWithFixture((server, fixture) => ((s = server), ({ volumeUuid } = fixture)));

  it("rule writes, qtree renames and deletes, volume deletion: each is in the next REST and GraphQL page", async () => {
    expect(await restPage(s)).toEqual([]);
    expect(await gqlPage(s)).toEqual([]);
    const made = await postRule(s.url, { type: "user", users: [{ name: "alice" }], "qtree.name": "qt1", "space.hard_limit": 1024 });
    expect(made.status, made.text).toBe(201);
    const uuid = made.body.records[0].uuid;
    // the explicit rule and the default rule it brought with it
    expect((await restPage(s)).map((r) => r.uuid)).toContain(uuid);
    expect((await gqlPage(s)).find((r) => r.uuid === uuid)).toMatchObject({ qtreeName: "qt1", spaceHardLimitBytes: 1024, volume: { name: "vol1" } });

    expect((await call(s.url, "PATCH", `/api/storage/quota/rules/${uuid}?return_timeout=30`, { space: { hard_limit: 2048 } })).status).toBe(200);
    expect((await restPage(s)).find((r) => r.uuid === uuid).space.hard_limit).toBe(2048);
    expect((await gqlPage(s)).find((r) => r.uuid === uuid).spaceHardLimitBytes).toBe(2048);

    const qt1 = (await call(s.url, "GET", `/api/storage/qtrees?volume.uuid=${volumeUuid}&name=qt1`)).body.records[0];
    expect((await call(s.url, "PATCH", `/api/storage/qtrees/${volumeUuid}/${qt1.id}?return_timeout=30`, { name: "renamed" })).status).toBe(200);
    expect((await restPage(s)).find((r) => r.uuid === uuid).qtree.name).toBe("renamed");
    expect((await gqlPage(s)).find((r) => r.uuid === uuid).qtreeName).toBe("renamed");

    expect((await call(s.url, "DELETE", `/api/storage/qtrees/${volumeUuid}/${qt1.id}?return_timeout=30`)).status).toBe(200);
    expect((await restPage(s)).map((r) => r.uuid)).not.toContain(uuid);
    expect((await gqlPage(s)).map((r) => r.uuid)).not.toContain(uuid);

    await postRule(s.url, { type: "group", "group.name": "staff" });
    expect((await restPage(s)).length).toBeGreaterThan(0);
    expect((await call(s.url, "DELETE", `/api/storage/volumes/${volumeUuid}?return_timeout=30`)).status).toBeLessThan(300);
    expect(await restPage(s)).toEqual([]);
    expect(await gqlPage(s)).toEqual([]);
  });
});

describe.skipIf(!redisUp)("quota rule pages: two instances sharing the database and Redis", () => {
  const pair = useInstancePair();

  it("a rule created on B is in A's page as soon as its event arrives", async () => {
    const { a, b } = pair;
    await storageFixture(a.url);
    expect(await restPage(a)).toEqual([]); // A keeps an empty page
    expect(await gqlPage(a)).toEqual([]);
    expect((await postRule(b.url, { type: "user", users: [{ name: "bob" }] })).status).toBe(201);
    await waitFor(async () => (await restPage(a)).some((r) => r.users?.[0]?.name === "bob"), 5000, "B's rule in A's REST page");
    await waitFor(async () => (await gqlPage(a)).some((r) => r.users?.[0]?.name === "bob"), 5000, "B's rule in A's GraphQL page");
  });
});
