import { afterAll, beforeAll, expect, it } from "vitest";
import { loadDemoFixture } from "../support/bundle.js";
import { call, startTestServer, type TestServer } from "../support/server.js";

let s: TestServer;
beforeAll(async () => void (s = await startTestServer()));
afterAll(() => s.close());

it("loads the demo SVM, volume and qtrees, idempotently, ready for a first rule", async () => {
  await loadDemoFixture(s.ctx);
  await loadDemoFixture(s.ctx);
  const q = await call(s.url, "GET", "/api/storage/qtrees?svm.name=vs0&volume.name=vol1&fields=name");
  expect(q.body.records.map((r: any) => r.name)).toEqual(["qt1", "qt2"]);
  const r = await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=10", { svm: { name: "vs0" }, volume: { name: "vol1" }, type: "tree", qtree: { name: "qt1" }, space: { hard_limit: 1073741824 } });
  expect(r.status).toBe(201);
});
