import { afterAll, beforeAll, expect, it } from "vitest";
import { optimizeDatabase } from "../support/bundle.js";
import { onPostgres, startTestServer, type TestServer } from "../support/server.js";

/** SQLite plans the quota-rule page well only with statistics; the server gathers them (docs/benchmarks.md). */
let s: TestServer;
beforeAll(async () => void (s = await startTestServer()));
afterAll(() => s.close());

it.skipIf(onPostgres)("gathers SQLite planner statistics for the quota rules", async () => {
  const db = s.ctx.db;
  await db.svm.create({ data: { uuid: "s1", name: "s1" } });
  await db.volume.create({ data: { uuid: "v1", name: "v1", svmUuid: "s1" } });
  await db.quotaRule.createMany({
    data: Array.from({ length: 3000 }, (_, i) => ({ uuid: `r${i}`, svmUuid: "s1", volumeUuid: "v1", type: ["user", "group", "tree"][i % 3], identity: `id${i}` })),
  });
  await optimizeDatabase(db, s.databaseUrl);
  const stats = await db.$queryRawUnsafe<{ idx: string }[]>("SELECT idx FROM sqlite_stat1 WHERE tbl = 'QuotaRule'");
  expect(stats.map((r) => r.idx)).toContain("QuotaRule_type_idx");
});
