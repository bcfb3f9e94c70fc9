import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { postRule, volumePerTest } from "./fixture.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

let svm: string;
let volumeName: string;
let volumeUuid: string;
volumePerTest(() => s, (v) => ({ svm, volumeName, volumeUuid } = v));

/** POST a rule the way Ansible does, on this test's SVM and volume. */
const addRule = (body: Record<string, unknown>) => postRule(s.url, { "svm.name": svm, "volume.name": volumeName, ...body });

const volume = async () => (await call(s.url, "GET", `/api/storage/volumes/${volumeUuid}?fields=quota`)).body.quota;
const reports = async () => (await call(s.url, "GET", `/api/storage/quota/reports?volume.uuid=${volumeUuid}&fields=*`)).body.records as any[];
const pollJob = async (uuid: string) => {
  for (let i = 0; i < 50; i++) {
    const j = (await call(s.url, "GET", `/api/cluster/jobs/${uuid}`)).body;
    if (j.state !== "queued" && j.state !== "running") return j;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("job never finished");
};
/** A tree rule on qt1 (10240 bytes) and quota on: the enforced state most of the enforcement tests start from. */
const enforcing = async () => {
  expect((await addRule({ type: "tree", "qtree.name": "qt1", "space.hard_limit": "10240" })).status).toBe(201);
  expect((await setQuota(true)).status).toBe(200);
};
const setQuota = (enabled: boolean) => call(s.url, "PATCH", `/api/storage/volumes/${volumeUuid}?return_timeout=30`, { "quota.enabled": enabled });

describe("jobs", () => {
  it("return_timeout=0 (the default) answers 202 with the job at once; the job then succeeds with timestamps", async () => {
    const r = await call(s.url, "POST", "/api/storage/quota/rules?return_records=true", { svm: { name: svm }, volume: { name: volumeName }, type: "tree", qtree: { name: "qt2" } });
    expect(r.status).toBe(202);
    expect(r.body.records[0].volume.uuid).toBe(volumeUuid);
    const job = await pollJob(r.body.job.uuid);
    expect(job).toMatchObject({ uuid: r.body.job.uuid, state: "success", code: 0, description: "POST /api/storage/quota/rules", svm: { name: svm } });
    expect(job.start_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    expect(job.end_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    expect(job._links.self.href).toBe(`/api/cluster/jobs/${job.uuid}`);
  });

  it("without return_records the write answers only the job", async () => {
    const r = await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=10", { svm: { name: svm }, volume: { name: volumeName }, type: "group", group: { name: "ops" } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(["job"]);
  });

  it("an unknown job is 404 entry doesn't exist", async () => {
    const r = await call(s.url, "GET", "/api/cluster/jobs/00000000-0000-4000-8000-000000000000");
    expect([r.status, r.body.error.code]).toEqual([404, "4"]);
  });

  it("a failed job is reported in the job and in the error envelope", async () => {
    const v2 = await call(s.url, "POST", "/api/storage/volumes?return_records=true&return_timeout=5", { name: `empty_${volumeName}`, svm: { name: svm } });
    const uuid = v2.body.records[0].uuid;
    const r = await call(s.url, "PATCH", `/api/storage/volumes/${uuid}?return_timeout=30`, { quota: { enabled: true } });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "14958", message: expect.stringMatching(/No valid quota rules/) });
    const job = await pollJob(r.body.job.uuid);
    expect(job).toMatchObject({ state: "failure", code: 14958, error: { code: "14958" } });
    expect(job.message).toMatch(/No valid quota rules/);
    // The same failure with return_timeout=0: 202, then the job fails.
    const later = await call(s.url, "PATCH", `/api/storage/volumes/${uuid}`, { quota: { enabled: true } });
    expect(later.status).toBe(202);
    expect((await pollJob(later.body.job.uuid)).state).toBe("failure");
    expect((await call(s.url, "GET", `/api/storage/volumes/${uuid}?fields=quota`)).body.quota).toEqual({ enabled: false, state: "off" });
  });
});

describe("enforcement follows quota state", () => {
  it("with quota off, rules change but nothing is enforced", async () => {
    expect(await volume()).toEqual({ enabled: false, state: "off" });
    await addRule({ type: "tree", "qtree.name": "qt1", "space.hard_limit": "10240" });
    expect(await reports()).toEqual([]);
  });

  it("turning quota on enforces the current rules", async () => {
    expect((await addRule({ type: "tree", "qtree.name": "qt1", "space.hard_limit": "10240" })).status).toBe(201);
    const r = await setQuota(true);
    expect(r.status).toBe(200);
    expect(await volume()).toEqual({ enabled: true, state: "on" });
    const qt1 = (await reports()).find((x) => x.type === "tree" && x.qtree.name === "qt1");
    expect(qt1.space).toEqual({ hard_limit: 10240, used: { total: 0 } });
  });

  it("with quota on, creating, changing and deleting a rule changes the enforced limits", async () => {
    await enforcing();
    const c = await addRule({ type: "user", "users.name": ["eve"], "files.hard_limit": "7" });
    const uuid = c.body.records[0].uuid;
    expect((await reports()).find((x) => x.users?.[0]?.name === "eve").files).toEqual({ hard_limit: 7, used: { total: 0 } });
    await call(s.url, "PATCH", `/api/storage/quota/rules/${uuid}?return_timeout=30`, { "files.hard_limit": "70" });
    expect((await reports()).find((x) => x.users?.[0]?.name === "eve").files.hard_limit).toBe(70);
    await call(s.url, "DELETE", `/api/storage/quota/rules/${uuid}?return_timeout=30`);
    expect((await reports()).find((x) => x.users?.[0]?.name === "eve")).toBeUndefined();
  });

  it("turning quota off clears enforcement; later rule changes are not enforced until it is on again", async () => {
    await enforcing();
    await setQuota(false);
    expect(await volume()).toEqual({ enabled: false, state: "off" });
    expect(await reports()).toEqual([]);
    const [rule] = (await call(s.url, "GET", `/api/storage/quota/rules?type=tree&qtree.name=qt1&volume.uuid=${volumeUuid}`)).body.records;
    await call(s.url, "PATCH", `/api/storage/quota/rules/${rule.uuid}?return_timeout=30`, { "space.hard_limit": "20480" });
    expect(await reports()).toEqual([]);
    await setQuota(true);
    expect((await reports()).find((x) => x.type === "tree" && x.qtree.name === "qt1").space.hard_limit).toBe(20480);
  });

  it("one report by volume and index; 404 for an unknown index", async () => {
    await enforcing();
    const [first] = await reports();
    const r = await call(s.url, "GET", `/api/storage/quota/reports/${volumeUuid}/${first.index}`);
    expect(r.body.index).toBe(first.index);
    expect((await call(s.url, "GET", `/api/storage/quota/reports/${volumeUuid}/999`)).status).toBe(404);
  });

  it("renaming a qtree renames its rules and their enforced limits; the renamed rule is still a duplicate", async () => {
    expect((await addRule({ type: "tree", "qtree.name": "qt2" })).status).toBe(201);
    expect((await setQuota(true)).status).toBe(200);
    const [tree] = (await call(s.url, "GET", `/api/storage/quota/rules?type=tree&qtree.name=qt2&volume.uuid=${volumeUuid}`)).body.records;
    await call(s.url, "PATCH", `/api/storage/quota/rules/${tree.uuid}?return_timeout=30`, { "files.hard_limit": "42" });
    const [qt] = (await call(s.url, "GET", `/api/storage/qtrees?name=qt2&volume.uuid=${volumeUuid}`)).body.records;
    const r = await call(s.url, "PATCH", `/api/storage/qtrees/${volumeUuid}/${qt.id}?return_timeout=30`, { name: "qt2b" });
    expect(r.status, r.text).toBe(200);
    const [rule] = (await call(s.url, "GET", `/api/storage/quota/rules?type=tree&qtree.name=qt2b&fields=files&volume.uuid=${volumeUuid}`)).body.records;
    expect(rule.files).toEqual({ hard_limit: 42 });
    expect((await call(s.url, "GET", `/api/storage/quota/rules?return_records=false&qtree.name=qt2&volume.uuid=${volumeUuid}`)).body.num_records).toBe(0);
    expect((await reports()).find((x) => x.qtree?.name === "qt2b").files.hard_limit).toBe(42);
    expect((await addRule({ type: "tree", "qtree.name": "qt2b" })).status).toBe(409);
  });

  it("deleting a qtree removes its rules and, with quota on, their enforcement", async () => {
    await enforcing();
    const [qt] = (await call(s.url, "GET", `/api/storage/qtrees?name=qt1&volume.uuid=${volumeUuid}`)).body.records;
    const d = await call(s.url, "DELETE", `/api/storage/qtrees/${volumeUuid}/${qt.id}?return_timeout=30`);
    expect(d.status).toBe(200);
    expect((await call(s.url, "GET", `/api/storage/quota/rules?return_records=false&qtree.name=qt1&volume.uuid=${volumeUuid}`)).body.num_records).toBe(0);
    expect((await reports()).some((x) => x.qtree?.name === "qt1")).toBe(false);
  });
});
