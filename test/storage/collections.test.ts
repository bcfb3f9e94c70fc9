import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { postRule, storageFixture } from "./fixture.js";

/** The ONTAP collection conventions: envelope, fields=, paging, return_records, order_by and the filter language. */
let s: TestServer;
const get = async (q: string) => {
  const r = await call(s.url, "GET", `/api/storage/quota/rules${q}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
};
const uuidsOf = (body: any) => body.records.map((r: any) => r.uuid).sort();

beforeAll(async () => {
  s = await startTestServer();
  await storageFixture(s.url);
  await postRule(s.url, { type: "tree", "qtree.name": "qt1", "files.hard_limit": "3", "space.hard_limit": "10240" }); // + default tree rule
  await postRule(s.url, { type: "tree", "qtree.name": "qt2", "files.hard_limit": "10" });
  await postRule(s.url, { type: "user", "users.name": ["alice"], "files.hard_limit": "6", "space.hard_limit": "2048" }); // + default user
  await postRule(s.url, { type: "user", "qtree.name": "qt1", "users.name": ["bob", "carol"] });
  await postRule(s.url, { type: "user", "users.name": ["1001"], "files.hard_limit": "5" });
  await postRule(s.url, { type: "group", "group.name": "staff", "files.hard_limit": "100" }); // + default group
});
afterAll(() => s.close());

describe("collection envelope and fields", () => {
  it("returns records, num_records and _links.self (as sent); default fields are keys, svm and volume", async () => {
    const b = await get("");
    expect(b.num_records).toBe(9);
    expect(b.records.length).toBe(9);
    expect(b._links.self.href).toBe("/api/storage/quota/rules");
    expect(b._links.next).toBeUndefined();
    expect(Object.keys(b.records[0]).sort()).toEqual(["_links", "svm", "uuid", "volume"]);
    expect(Object.keys(b.records[0].svm).sort()).toEqual(["_links", "name", "uuid"]);
  });

  it("fields= selects dotted fields, whole parents and *, ignores empty entries, always keeps uuid", async () => {
    const b = await get("?type=group&fields=group.name,space,,files.hard_limit,");
    for (const r of b.records) {
      expect(r.uuid).toBeTruthy();
      expect(r.group).toHaveProperty("name");
      expect(r).not.toHaveProperty("volume");
    }
    const staff = b.records.find((r: any) => r.group.name === "staff");
    expect(staff.files).toEqual({ hard_limit: 100 });
    const all = await get("?fields=*&type=tree&qtree.name=qt1");
    expect(all.records[0]).toMatchObject({ type: "tree", qtree: { name: "qt1" }, space: { hard_limit: 10240 }, files: { hard_limit: 3 } });
  });

  it("echoes filtered fields in the records", async () => {
    const b = await get("?files.hard_limit=>5");
    expect(b.records.every((r: any) => r.files.hard_limit > 5)).toBe(true);
  });

  it("return_records=false returns only the count", async () => {
    const b = await get("?return_records=false&type=user");
    expect(b).toEqual({ num_records: 4, _links: { self: { href: "/api/storage/quota/rules?return_records=false&type=user" } } });
  });

  it("drops _links (except next) for Accept: application/json", async () => {
    const r = await call(s.url, "GET", "/api/storage/quota/rules?max_records=2", undefined, { accept: "application/json" });
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body.records[0]).not.toHaveProperty("_links");
    expect(r.body._links).toEqual({ next: expect.any(Object) });
  });
});

describe("paging and ordering", () => {
  it("max_records pages with working next links: every record exactly once", async () => {
    const all = uuidsOf(await get(""));
    const seen: string[] = [];
    let href: string | undefined = "/api/storage/quota/rules?max_records=3&type=user|group|tree";
    let pages = 0;
    while (href) {
      const r = await call(s.url, "GET", href);
      expect(r.body.num_records).toBeLessThanOrEqual(3);
      seen.push(...r.body.records.map((x: any) => x.uuid));
      href = r.body._links.next?.href;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(all);
  });

  it("order_by sorts in the database (asc, desc) and pages by offset", async () => {
    const asc = await get("?order_by=files.hard_limit&files.hard_limit=!null&fields=files");
    expect(asc.records.map((r: any) => r.files.hard_limit)).toEqual([3, 5, 6, 10, 100]);
    const desc = await get("?order_by=files.hard_limit%20desc&files.hard_limit=!null&max_records=2");
    expect(desc.records.map((r: any) => r.files.hard_limit)).toEqual([100, 10]);
    const next = await call(s.url, "GET", desc._links.next.href);
    expect(next.body.records.map((r: any) => r.files.hard_limit)).toEqual([6, 5]);
  });

  it("rejects bad paging and ordering parameters", async () => {
    for (const q of ["max_records=0", "max_records=x", "order_by=users.name", "order_by=type%20sideways", "return_records=maybe"]) {
      const r = await call(s.url, "GET", `/api/storage/quota/rules?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code).toBe("262185");
    }
  });
});

describe("the filter language", () => {
  const count = async (q: string) => (await get(`?return_records=false&${q}`)).num_records;

  it.each([
    ["type=tree", 3],
    ["type=user|group", 6],
    ["type=!tree", 6],
    ["files.hard_limit=>5", 3],
    ["files.hard_limit=>=5", 4],
    ["files.hard_limit=<6", 2],
    ["files.hard_limit=<=6", 3],
    ["files.hard_limit=>5|null", 7],
    ["files.hard_limit=null", 4],
    ["files.hard_limit=!null", 5],
    ["files.hard_limit=!5", 4],
    ["space.hard_limit=2048", 1],
    ["qtree.name=qt*", 3],
    ["qtree.name=*1", 2],
    ["qtree.name=", 1],
    ["qtree.id=2", 1],
    ["users.name=bob", 1],
    ["users.name=carol,alice", 2],
    ["users.name=al*", 1],
    ["users.id=1001", 1],
    ["group.name=staff", 1],
    ["svm.name=svm1&volume.name=vol1&type=tree", 3],
    ["svm.name=other", 0],
    ["user_mapping=false&type=user", 4],
  ])("%s matches %i rules", async (q, n) => {
    expect(await count(q)).toBe(n);
  });

  it("rejects unknown fields and values of the wrong type with 400", async () => {
    for (const [q, code] of [["colour=red", "262179"], ["files.hard_limit=lots", "262185"], ["user_mapping=perhaps", "262185"], ["files.hard_limit=5*", "262185"]]) {
      const r = await call(s.url, "GET", `/api/storage/quota/rules?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code).toBe(code);
    }
  });
});

describe("other collections use the same conventions", () => {
  it("volumes, qtrees and SVMs filter and project", async () => {
    const v = (await call(s.url, "GET", "/api/storage/volumes?name=vol1&svm.name=svm1&fields=quota.state,uuid")).body;
    expect(v.num_records).toBe(1);
    expect(v.records[0].quota).toEqual({ state: "off" });
    const q = (await call(s.url, "GET", "/api/storage/qtrees?volume.name=vol1&name=qt2&fields=*")).body;
    expect(q.records[0]).toMatchObject({ id: 2, name: "qt2", path: "/vol/vol1/qt2", security_style: "unix" });
    const svms = (await call(s.url, "GET", "/api/svm/svms?name=svm*")).body;
    expect(svms.records.map((x: any) => x.name)).toEqual(["svm1"]);
  });

  it("an unknown API path answers 404 in the ONTAP envelope", async () => {
    const r = await call(s.url, "GET", "/api/storage/nothing");
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("4");
  });
});
