import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, onPostgres, startTestServer, type TestServer } from "../support/server.js";
import { postRule, storageFixture } from "./fixture.js";

/** Races, hostile names and identities on the ONTAP face (issue 8, items 7, 9 and 10). */
let s: TestServer;
let volumeUuid: string;
beforeAll(async () => {
  s = await startTestServer();
  ({ volumeUuid } = await storageFixture(s.url));
  expect((await postRule(s.url, { type: "user", "users.name": ["seed"] })).status).toBe(201);
  expect((await call(s.url, "PATCH", `/api/storage/volumes/${volumeUuid}?return_timeout=30`, { "quota.enabled": true })).status).toBe(200);
});
afterAll(() => s.close());

const rules = async () => (await call(s.url, "GET", `/api/storage/quota/rules?volume.uuid=${volumeUuid}&fields=*&max_records=10000`)).body.records as any[];
const reports = async () => (await call(s.url, "GET", `/api/storage/quota/reports?volume.uuid=${volumeUuid}&fields=*&max_records=10000`)).body.records as any[];
const quota = async () => (await call(s.url, "GET", `/api/storage/volumes/${volumeUuid}?fields=quota`)).body.quota;
const statuses = (rs: { status: number }[]) => rs.map((r) => r.status).sort().join(",");
/** PostgreSQL runs the creates in parallel on its pool (10 connections): 100 exceed it; SQLite serialises writes. */
const RACERS = onPostgres ? 100 : 50;
const many = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

/** Enforcement equals the committed rules: one report per rule, same targets and limits. */
async function expectEnforcementMatchesRules() {
  const [rs, reps] = await Promise.all([rules(), reports()]);
  const key = (x: any) => JSON.stringify([x.type, x.qtree?.name ?? "", (x.users ?? []).map((u: any) => u.name ?? u.id), x.group?.name ?? "", x.space?.hard_limit ?? null]);
  expect(reps.map(key).sort()).toEqual(rs.map(key).sort());
  expect(await quota()).toEqual({ enabled: true, state: "on" });
}

describe("races answer 409, never 500, and never lie (item 7)", () => {
  it(`${RACERS} concurrent creates of different rules with quota on: all 201, all enforced`, async () => {
    const rs = await many(RACERS, (i) => postRule(s.url, { type: "user", "users.name": [`racer${i}`], "space.hard_limit": String(1024 * (i + 1)) }));
    expect(statuses(rs)).toBe(Array(RACERS).fill(201).join(","));
    await expectEnforcementMatchesRules();
  });

  it("40 concurrent creates of one rule: one 201, the others 409 duplicate rule; the rule exists once", async () => {
    const rs = await many(40, () => postRule(s.url, { type: "user", "users.name": ["same"], "space.hard_limit": "4096" }));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of rs.filter((r) => r.status !== 201)) expect([r.status, r.body.error.code]).toEqual([409, "5308546"]);
    expect((await rules()).filter((r) => r.users?.[0]?.name === "same")).toHaveLength(1);
    await expectEnforcementMatchesRules();
  });

  it("concurrent updates, deletes and creates with quota toggled off and on: every answer matches the outcome", async () => {
    const targets = (await rules()).filter((r) => /^racer\d+$/.test(r.users?.[0]?.name ?? "")).slice(0, 30);
    const writes = await Promise.all([
      ...targets.slice(0, 15).map((r, i) => call(s.url, "PATCH", `/api/storage/quota/rules/${r.uuid}?return_timeout=30`, { "space.hard_limit": String(999 * 1024 + i * 1024) })),
      ...targets.slice(15).map((r) => call(s.url, "DELETE", `/api/storage/quota/rules/${r.uuid}?return_timeout=30`)),
      ...Array.from({ length: 15 }, (_, i) => postRule(s.url, { type: "group", "group.name": `grp${i}` })),
      call(s.url, "PATCH", `/api/storage/volumes/${volumeUuid}?return_timeout=30`, { "quota.enabled": false }),
      call(s.url, "PATCH", `/api/storage/volumes/${volumeUuid}?return_timeout=30`, { "quota.enabled": true }),
    ]);
    expect(writes.filter((w) => w.status >= 300), JSON.stringify(writes.filter((w) => w.status >= 300).map((w) => w.body))).toEqual([]);
    // Whatever order the toggles ran in, turning quota on once more must leave enforcement equal to the rules.
    expect((await call(s.url, "PATCH", `/api/storage/volumes/${volumeUuid}?return_timeout=30`, { "quota.enabled": true })).status).toBe(200);
    await expectEnforcementMatchesRules();
  });

  it("concurrent SVM and volume creates with one name: one 201, the others 409 duplicate name", async () => {
    const svms = await many(30, () => call(s.url, "POST", "/api/svm/svms?return_timeout=5", { name: "racesvm" }));
    expect(svms.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of svms.filter((r) => r.status !== 201)) expect([r.status, r.body.error.code]).toEqual([409, "5308547"]);
    const vols = await many(30, () => call(s.url, "POST", "/api/storage/volumes?return_timeout=5", { name: "racevol", svm: { name: "racesvm" } }));
    expect(vols.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of vols.filter((r) => r.status !== 201)) expect([r.status, r.body.error.code]).toEqual([409, "5308547"]);
    const qtrees = await many(30, () => call(s.url, "POST", "/api/storage/qtrees?return_timeout=5", { name: "raceqt", svm: { name: "racesvm" }, volume: { name: "racevol" } }));
    expect(qtrees.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of qtrees.filter((r) => r.status !== 201)) expect(r.status).toBe(409);
    expect((await call(s.url, "GET", "/api/svm/svms?name=racesvm")).body.num_records).toBe(1);
  });

  it("concurrent deletes and changes of one rule: one delete wins, the rest answer 404 (the rule is gone), never 500", async () => {
    const r = await postRule(s.url, { type: "user", "users.name": ["doomed"] });
    const uuid = r.body.records[0].uuid;
    const rs = await many(20, (i) =>
      i % 2 ? call(s.url, "DELETE", `/api/storage/quota/rules/${uuid}?return_timeout=30`) : call(s.url, "PATCH", `/api/storage/quota/rules/${uuid}?return_timeout=30`, { space: { hard_limit: 2048 } }),
    );
    expect(rs.filter((x) => x.status === 200 && x.text.includes("job")).length).toBeGreaterThanOrEqual(1);
    for (const x of rs.filter((x) => x.status !== 200)) expect([x.status, x.body.error.code], x.text).toEqual([404, "4"]);
    expect((await call(s.url, "GET", `/api/storage/quota/rules/${uuid}`)).status).toBe(404);
  });

  it("the same race through GraphQL answers a typed ConflictError", async () => {
    const rs = await many(20, () => gql(s.url, `mutation { createSvm(input: { name: "gqlsvm" }) { __typename ... on ConflictError { message } } }`));
    const types = rs.map((r) => r.data?.createSvm?.__typename ?? JSON.stringify(r.errors));
    expect(types.filter((t) => t !== "ConflictError")).toHaveLength(1);
  });
});

describe("control characters in names (item 9)", () => {
  const bad = ["nul\u0000x", "tab\tx", "bell\u0007", "del\u007f"];
  it.each(bad)("%j is refused with 400 in ONTAP's shape for SVM, volume, qtree, user and group names", async (name) => {
    const answers = [
      await call(s.url, "POST", "/api/svm/svms", { name }),
      await call(s.url, "POST", "/api/storage/volumes", { name, svm: { name: "svm1" } }),
      await call(s.url, "POST", "/api/storage/qtrees", { name, svm: { name: "svm1" }, volume: { name: "vol1" } }),
      await postRule(s.url, { type: "user", "users.name": [name] }),
      await postRule(s.url, { type: "user", "users.name": ["ok", name] }),
      await postRule(s.url, { type: "group", "group.name": name }),
      await postRule(s.url, { type: "tree", "qtree.name": name }),
    ];
    for (const r of answers) {
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toMatchObject({ code: "262185", message: expect.any(String) });
    }
    const found = await rules();
    expect(found.some((r) => JSON.stringify(r).includes(name.slice(0, 3)))).toBe(false);
  });

  it("NUL in a name used to look something up is 400, not 500, on both databases", async () => {
    const r = await call(s.url, "POST", "/api/storage/volumes", { name: "v", svm: { name: "a\u0000b" } });
    expect([r.status, r.body.error.code]).toEqual([400, "262185"]);
    for (const url of ["/api/svm/svms?name=a%00b", "/api/storage/quota/rules?users.name=a%00b", "/api/storage/volumes/a%00b"]) {
      const g = await call(s.url, "GET", url);
      expect([g.status, g.body.error?.code], url).toEqual([400, "262185"]);
    }
    const g = await gql(s.url, `mutation { createSvm(input: { name: "x\\u0000y" }) { __typename } }`);
    expect(JSON.stringify(g)).not.toMatch(/Unexpected error|Internal/);
    expect((await call(s.url, "GET", "/api/cluster")).status).toBe(200);
  });
});

describe("rule identity is injective (item 10)", () => {
  it('one user named "a,name:b" and the users a and b are different rules', async () => {
    const one = await postRule(s.url, { type: "user", users: [{ name: "x,name:y" }] });
    const two = await postRule(s.url, { type: "user", users: [{ name: "x" }, { name: "y" }] });
    const pct = await postRule(s.url, { type: "user", users: [{ name: "x%2Cname:y" }] });
    expect([one.status, two.status, pct.status]).toEqual([201, 201, 201]);
    for (const body of [{ users: [{ name: "x,name:y" }] }, { users: [{ name: "y" }, { name: "x" }] }, { users: [{ name: "x%2Cname:y" }] }]) {
      const dup = await postRule(s.url, { type: "user", ...body });
      expect([dup.status, dup.body.error.code]).toEqual([409, "5308546"]);
    }
    const names = (await rules()).map((r) => (r.users ?? []).map((u: any) => u.name).join("+"));
    expect(names).toEqual(expect.arrayContaining(["x,name:y", "x+y", "x%2Cname:y"]));
  });
});
