import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jobOwner } from "../support/bundle.js";
import { call, freshDatabaseUrl, startTestServer, type TestServer } from "../support/server.js";
import { postRule, storageFixture } from "./fixture.js";

/**
 * What a restart repairs (issue 8, items 6 and 10). The crash itself is test/storage/crash.test.ts; here the states
 * a kill can leave behind are written directly, so each repair is checked exactly, including with other instances
 * sharing the database.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function sharedStore() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-recovery-"));
  const db = await freshDatabaseUrl(dataDir);
  cleanups.push(db.drop);
  return { databaseUrl: db.url, dataDir };
}

async function start(store: { databaseUrl: string; dataDir: string }, redis = false): Promise<TestServer> {
  const s = await startTestServer(redis ? { redisUrl: REDIS_URL } : {}, store);
  cleanups.push(() => s.close());
  return s;
}

const job = async (s: TestServer, uuid: string) => (await call(s.url, "GET", `/api/cluster/jobs/${uuid}`)).body;
const reportUsers = async (s: TestServer, volumeUuid: string) =>
  ((await call(s.url, "GET", `/api/storage/quota/reports?volume.uuid=${volumeUuid}&fields=users`)).body.records as any[]).map((r) => r.users?.[0]?.name);

/** The states a kill leaves: a rule committed but not enforced (volume marked resizing), unfinished jobs. */
async function crashLeftovers(s: TestServer, volumeUuid: string, owners: string[]) {
  const r = await postRule(s.url, { type: "user", "users.name": ["late"] });
  expect(r.status).toBe(201);
  await s.ctx.db.enforcedQuota.deleteMany({ where: { ruleUuid: r.body.records[0].uuid } });
  await s.ctx.db.volume.update({ where: { uuid: volumeUuid }, data: { quotaState: "resizing" } });
  const jobs = [];
  for (const [i, owner] of owners.entries()) {
    jobs.push(await s.ctx.db.job.create({ data: { uuid: `00000000-0000-4000-8000-00000000000${i}`, description: "POST /api/storage/quota/rules", state: i % 2 ? "queued" : "running", owner } }));
  }
  return jobs.map((j) => j.uuid);
}

async function quotaOnFixture(s: TestServer) {
  const { volumeUuid } = await storageFixture(s.url);
  expect((await postRule(s.url, { type: "user", "users.name": ["early"] })).status).toBe(201);
  expect((await call(s.url, "PATCH", `/api/storage/volumes/${volumeUuid}?return_timeout=30`, { "quota.enabled": true })).status).toBe(200);
  return volumeUuid;
}

describe("start-up recovery", () => {
  it("alone on its database: every unfinished job fails with a clear message; enforcement catches up; stuck states settle", async () => {
    const store = await sharedStore();
    const first = await start(store);
    const volumeUuid = await quotaOnFixture(first);
    const jobs = await crashLeftovers(first, volumeUuid, [jobOwner(first.ctx), "another-host:/srv/patchbay"]);
    // A second volume whose quota-off was interrupted between its transaction and nothing else: state left behind.
    const v2 = await call(first.url, "POST", "/api/storage/volumes?return_records=true&return_timeout=5", { name: "vol2", svm: { name: "svm1" } });
    await first.ctx.db.volume.update({ where: { uuid: v2.body.records[0].uuid }, data: { quotaState: "resizing" } });
    expect(await reportUsers(first, volumeUuid)).not.toContain("late");
    await first.close();

    const second = await start(store);
    for (const uuid of jobs) {
      const j = await job(second, uuid);
      expect(j).toMatchObject({ state: "failure", code: 5308549, error: { code: "5308549" } });
      expect(j.message).toMatch(/interrupted/);
      expect(j.end_time).toBeTruthy();
    }
    expect((await call(second.url, "GET", `/api/storage/volumes/${volumeUuid}?fields=quota`)).body.quota).toEqual({ enabled: true, state: "on" });
    expect((await call(second.url, "GET", `/api/storage/volumes/${v2.body.records[0].uuid}?fields=quota`)).body.quota).toEqual({ enabled: false, state: "off" });
    expect((await reportUsers(second, volumeUuid)).sort()).toEqual(["", "early", "late"].sort());
  }, 60_000);

  it("sharing the database (REDIS_URL): only this instance's own jobs are failed, another instance's keep running", async () => {
    const store = await sharedStore();
    const first = await start(store, true);
    const volumeUuid = await quotaOnFixture(first);
    const [own, other] = await crashLeftovers(first, volumeUuid, [jobOwner(first.ctx), "another-host:/srv/patchbay"]);
    await first.close();

    const second = await start(store, true);
    expect((await job(second, own)).state).toBe("failure");
    expect((await job(second, other)).state).toBe("queued");
    // The committed rule is enforced all the same: rebuilding a copy is safe whoever else is resizing.
    expect(await reportUsers(second, volumeUuid)).toContain("late");
  }, 60_000);
});

describe("the enforcement resync migration", () => {
  it("heals a volume an older version left 'on' with a stale copy: the first start rebuilds it from the rules", async () => {
    const store = await sharedStore();
    const first = await start(store);
    const volumeUuid = await quotaOnFixture(first);
    const r = await postRule(first.url, { type: "user", "users.name": ["lost"] });
    // The damage of a crash before this fix: the rule committed, its resize never ran, the state still "on".
    await first.ctx.db.enforcedQuota.deleteMany({ where: { ruleUuid: r.body.records[0].uuid } });
    await first.ctx.db.$executeRawUnsafe(`DELETE FROM "_prisma_migrations" WHERE migration_name = '20261123001222_quota_enforcement_resync'`);
    await first.close();

    const second = await start(store);
    expect(await reportUsers(second, volumeUuid)).toContain("lost");
    expect((await call(second.url, "GET", `/api/storage/volumes/${volumeUuid}?fields=quota`)).body.quota).toEqual({ enabled: true, state: "on" });
  }, 60_000);
});

describe("the identity migration (item 10)", () => {
  it("re-keys rules stored with the old, ambiguous identity: both rules can exist and each is still a duplicate of itself", async () => {
    const store = await sharedStore();
    const first = await start(store);
    await storageFixture(first.url);
    const one = await postRule(first.url, { type: "user", users: [{ name: "p,name:q" }] });
    expect(one.status).toBe(201);
    // As the rule was stored before the fix: the old encoding, and the migration not yet applied.
    await first.ctx.db.quotaRule.update({ where: { uuid: one.body.records[0].uuid }, data: { identity: "user|volume|name:p,name:q" } });
    await first.ctx.db.$executeRawUnsafe(`DELETE FROM "_prisma_migrations" WHERE migration_name = '20261122234600_quota_identity_escape'`);
    await first.close();

    const second = await start(store);
    expect((await postRule(second.url, { type: "user", users: [{ name: "p" }, { name: "q" }] })).status).toBe(201);
    const dup = await postRule(second.url, { type: "user", users: [{ name: "p,name:q" }] });
    expect([dup.status, dup.body.error?.code]).toEqual([409, "5308546"]);
  }, 60_000);
});
