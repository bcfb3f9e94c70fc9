import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { postRule, storageFixture } from "./fixture.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

// Each test has its own SVM and volume (with qtrees qt1 and qt2), so the rules it finds are only its own.
let svm: string;
let volume: string;
let volumeUuid: string;
let fixtures = 0;
beforeEach(async () => {
  const n = ++fixtures;
  svm = `svm${n}`;
  volume = `vol${n}`;
  ({ volumeUuid } = await storageFixture(s.url, svm, volume));
});

/** POST a rule the way Ansible does, on this test's SVM and volume unless the body names others. */
const addRule = (body: Record<string, unknown>) => postRule(s.url, { "svm.name": svm, "volume.name": volume, ...body });
const rules = async (query = "") => (await call(s.url, "GET", `/api/storage/quota/rules?fields=*&volume.uuid=${volumeUuid}${query}`)).body.records as any[];
const one = async (uuid: string) => (await call(s.url, "GET", `/api/storage/quota/rules/${uuid}`)).body;

describe("POST /api/storage/quota/rules", () => {
  it("creates a tree rule from Ansible's flat body with string numbers: 201, Location, records[0] with uuids, job", async () => {
    const r = await addRule({ type: "tree", "qtree.name": "qt1", "files.hard_limit": "1000", "files.soft_limit": "800", "space.hard_limit": "1073741824", "space.soft_limit": "838860800" });
    expect(r.status).toBe(201);
    const rec = r.body.records[0];
    expect(r.headers.get("location")).toBe(`/api/storage/quota/rules/${rec.uuid}`);
    expect(r.body.num_records).toBe(1);
    expect(rec.volume.uuid).toBe(volumeUuid);
    expect(rec.svm.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(rec.qtree).toMatchObject({ name: "qt1", id: 1 });
    expect(rec.space).toEqual({ hard_limit: 1073741824, soft_limit: 838860800 });
    expect(rec.files).toEqual({ hard_limit: 1000, soft_limit: 800 });
    expect(r.body.job._links.self.href).toBe(`/api/cluster/jobs/${r.body.job.uuid}`);
    expect(r.headers.get("content-type")).toMatch(/application\/hal\+json/);
  });

  it("adds the default rule of the same type automatically, once", async () => {
    expect((await addRule({ type: "tree", "qtree.name": "qt1" })).status).toBe(201);
    const trees = await rules("&type=tree");
    expect(trees.filter((t) => t.qtree.name === "").length).toBe(1);
    await addRule({ type: "tree", "qtree.name": "qt2" });
    expect((await rules("&type=tree")).filter((t) => t.qtree.name === "").length).toBe(1);
  });

  it("accepts nested JSON (Terraform, netapp_ontap) and rounds space limits up to whole KiB", async () => {
    const r = await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=10&return_records=true", {
      svm: { name: svm }, volume: { uuid: volumeUuid }, type: "user", users: [{ name: "jsmith" }], qtree: { name: "qt1" },
      user_mapping: "on", space: { hard_limit: 100, soft_limit: 1500 }, files: { hard_limit: 20, soft_limit: 0 },
    });
    expect(r.status, r.text).toBe(201);
    const rec = await one(r.body.records[0].uuid);
    expect(rec.space).toEqual({ hard_limit: 1024, soft_limit: 2048 });
    expect(rec.files).toEqual({ hard_limit: 20, soft_limit: 0 });
    expect(rec.user_mapping).toBe(true);
    expect(rec.users).toEqual([{ name: "jsmith" }]);
    expect(rec.qtree.name).toBe("qt1");
  });

  it("reports volume-level user rules without qtree, numeric user names as ids, and unlimited limits as absent", async () => {
    const a = await addRule({ type: "user", "qtree.name": "", "users.name": ["user1"], "space.hard_limit": "-", "files.hard_limit": -1, user_mapping: false });
    const b = await addRule({ type: "user", "qtree.name": "", "users.name": ["1001"], "files.hard_limit": "50" });
    const ra = await one(a.body.records[0].uuid);
    expect(ra).not.toHaveProperty("qtree");
    expect(ra).not.toHaveProperty("space");
    expect(ra).not.toHaveProperty("files");
    expect(ra.user_mapping).toBe(false);
    const rb = await one(b.body.records[0].uuid);
    expect(rb.users).toEqual([{ id: "1001" }]);
    const defaults = (await rules("&type=user")).filter((r) => r.users[0].name === "" && !r.qtree);
    expect(defaults.length).toBe(1);
  });

  it("creates multi-user and group rules; group by name or id", async () => {
    const m = await addRule({ type: "user", "qtree.name": "qt1", "users.name": ["user2", "user3"], "space.hard_limit": "512000" });
    expect(m.status).toBe(201);
    expect((await one(m.body.records[0].uuid)).users).toEqual([{ name: "user2" }, { name: "user3" }]);
    const g = await addRule({ type: "group", "qtree.name": "qt1", "group.name": "group1", "files.hard_limit": "2000" });
    expect((await one(g.body.records[0].uuid)).group).toEqual({ name: "group1" });
    const gi = await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=5&return_records=true", { svm: { name: svm }, volume: { name: volume }, type: "group", group: { id: "500" } });
    expect((await one(gi.body.records[0].uuid)).group).toEqual({ id: "500" });
    expect((await rules("&type=group")).some((r) => r.group.name === "" && !r.qtree)).toBe(true);
  });

  it("rejects duplicates with 409 and nothing changes", async () => {
    expect((await addRule({ type: "tree", "qtree.name": "qt1" })).status).toBe(201);
    expect((await addRule({ type: "user", "qtree.name": "qt1", "users.name": ["user2", "user3"] })).status).toBe(201);
    const before = (await rules()).length;
    const r = await addRule({ type: "tree", "qtree.name": "qt1" });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("5308546");
    const multi = await addRule({ type: "user", "qtree.name": "qt1", "users.name": ["user3", "user2"] });
    expect(multi.status).toBe(409);
    expect((await rules()).length).toBe(before);
  });

  it.each([
    ["group on a user rule", { type: "user", "users.name": ["x"], "group.name": "g" }, "5308514", "group"],
    ["group on a tree rule", { type: "tree", "qtree.name": "qt2", "group.name": "g" }, "5308514", "group"],
    ["group name and id together", { type: "group", group: { name: "g", id: "5" } }, "5308514", "group"],
    ["users on a group rule", { type: "group", "group.name": "g", "users.name": ["x"] }, "5308514", "users"],
    ["user_mapping on a tree rule", { type: "tree", "qtree.name": "qt2", user_mapping: true }, "5308514", "user_mapping"],
    ["user rule without users", { type: "user" }, "262186", "users"],
    ["group rule without group", { type: "group" }, "262186", "group"],
    ["tree rule without qtree", { type: "tree" }, "262186", "qtree.name"],
    ["missing type", { "qtree.name": "qt1" }, "262186", "type"],
    ["bad type", { type: "project" }, "262185", "type"],
    ["unknown field", { type: "tree", "qtree.name": "qt2", colour: "red" }, "262179", "colour"],
    ["unknown nested field", { type: "tree", qtree: { name: "qt2", size: 1 } }, "262179", "qtree.size"],
    ["limit of the wrong type", { type: "tree", "qtree.name": "qt2", "space.hard_limit": "ten" }, "262185", "space.hard_limit"],
    ["negative limit", { type: "tree", "qtree.name": "qt2", "files.hard_limit": -5 }, "262185", "files.hard_limit"],
    ["user_mapping not a boolean", { type: "user", "users.name": ["z"], user_mapping: "maybe" }, "262185", "user_mapping"],
    ["both user name and id", { type: "user", users: [{ name: "a", id: "1" }] }, "5308514", "users[0]"],
  ])("rejects %s with 400 in the ONTAP envelope", async (_name, body, code, target) => {
    const r = await addRule(body);
    expect(r.status, r.text).toBe(400);
    expect(r.body.error).toMatchObject({ code, target });
    expect(typeof r.body.error.message).toBe("string");
  });

  it("answers 404 for an unknown SVM, volume or qtree", async () => {
    expect((await addRule({ "svm.name": "nope", type: "tree", "qtree.name": "qt1" })).body.error.code).toBe("2621462");
    const v = await addRule({ "volume.name": "nope", type: "tree", "qtree.name": "qt1" });
    expect([v.status, v.body.error.code]).toEqual([404, "917927"]);
    const q = await addRule({ type: "tree", "qtree.name": "qt9" });
    expect([q.status, q.body.error.code]).toEqual([404, "5242955"]);
  });

  it("rejects a non-object body, bad JSON and oversized bodies without a 500", async () => {
    expect((await call(s.url, "POST", "/api/storage/quota/rules", "[1,2]")).status).toBe(400);
    const bad = await call(s.url, "POST", "/api/storage/quota/rules", "{nope");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/JSON/);
    const huge = await call(s.url, "POST", "/api/storage/quota/rules", JSON.stringify({ type: "tree", pad: "x".repeat(2 * 1024 * 1024) }));
    expect(huge.status).toBe(413);
    expect((await call(s.url, "GET", "/api/cluster")).status).toBe(200);
  });

  it("rejects unknown query parameters on writes", async () => {
    const r = await call(s.url, "POST", "/api/storage/quota/rules?colour=red", { type: "tree" });
    expect([r.status, r.body.error.code, r.body.error.target]).toEqual([400, "262179", "colour"]);
    expect((await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=500", {})).status).toBe(400);
  });
});

describe("PATCH and DELETE /api/storage/quota/rules/{uuid}", () => {
  it("changes space, files and user_mapping (Ansible's dotted strings, '-' clears)", async () => {
    const c = await addRule({ type: "user", "qtree.name": "qt2", "users.name": ["pat"], "files.soft_limit": "10", "space.hard_limit": "4096" });
    const uuid = c.body.records[0].uuid;
    const p = await call(s.url, "PATCH", `/api/storage/quota/rules/${uuid}?return_timeout=30`, { "space.hard_limit": "2048", "files.hard_limit": "1500", "files.soft_limit": "-", user_mapping: true });
    expect(p.status, p.text).toBe(200);
    expect(p.body.job.uuid).toBeTruthy();
    const r = await one(uuid);
    expect(r.space).toEqual({ hard_limit: 2048 });
    expect(r.files).toEqual({ hard_limit: 1500 });
    expect(r.user_mapping).toBe(true);
  });

  it.each([
    [{ type: "group" }, "type"],
    [{ "qtree.name": "qt1" }, "qtree"],
    [{ users: [{ name: "x" }] }, "users"],
    [{ "svm.name": "x" }, "svm"],
    [{ colour: "x" }, "colour"],
  ])("refuses %j (only space, files and user_mapping may change)", async (body, target) => {
    expect((await addRule({ type: "tree", "qtree.name": "qt1" })).status).toBe(201);
    const [rule] = await rules("&type=tree&qtree.name=qt1");
    const r = await call(s.url, "PATCH", `/api/storage/quota/rules/${rule.uuid}`, body);
    expect([r.status, r.body.error.code, r.body.error.target]).toEqual([400, "262179", target]);
  });

  it("refuses user_mapping on a group rule", async () => {
    expect((await addRule({ type: "group", "qtree.name": "qt1", "group.name": "group1" })).status).toBe(201);
    const [g] = await rules("&type=group&group.name=group1");
    const r = await call(s.url, "PATCH", `/api/storage/quota/rules/${g.uuid}`, { user_mapping: true });
    expect(r.status).toBe(400);
  });

  it("deletes; the rule is then 404 with code 4", async () => {
    const c = await addRule({ type: "group", "qtree.name": "qt2", "group.name": "gone" });
    const uuid = c.body.records[0].uuid;
    const d = await call(s.url, "DELETE", `/api/storage/quota/rules/${uuid}?return_timeout=30`);
    expect(d.status).toBe(200);
    const g = await call(s.url, "GET", `/api/storage/quota/rules/${uuid}`);
    expect(g.status).toBe(404);
    expect(g.body).toEqual({ error: { message: "entry doesn't exist", code: "4", target: "uuid" } });
    expect((await call(s.url, "DELETE", `/api/storage/quota/rules/${uuid}`)).status).toBe(404);
    expect((await call(s.url, "PATCH", `/api/storage/quota/rules/${uuid}`, { "files.hard_limit": 1 })).status).toBe(404);
  });
});
