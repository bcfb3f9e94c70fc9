import { afterAll, beforeAll, expect, it } from "vitest";
import { call, onPostgres, startTestServer, type TestServer } from "../support/server.js";

/**
 * SQLite runs inside the server process: a commit that fsyncs freezes every request meanwhile (18 ms median,
 * 50 ms p99 per write on the test VM). The server's connection journals in WAL without an fsync per commit, and
 * keeps those settings after transactions (the stock libsql client opened a fresh connection, with the defaults,
 * after each one).
 */
let s: TestServer;
beforeAll(async () => void (s = await startTestServer()));
afterAll(() => s.close());

const pragma = async (name: string) => Object.values((await s.ctx.db.$queryRawUnsafe<Record<string, unknown>[]>(`PRAGMA ${name}`))[0])[0];

it.skipIf(onPostgres)("commits without an fsync per write, before and after transactions", async () => {
  expect(await pragma("journal_mode")).toBe("wal");
  expect(Number(await pragma("synchronous"))).toBe(1); // NORMAL
  // Requests whose operations run interactive transactions (project and node creation, ONTAP writes with jobs).
  const p = await call(s.url, "POST", "/v2/projects", { name: "wal" });
  expect(p.status).toBe(201);
  const n = await call(s.url, "POST", `/v2/projects/${p.body.project_id}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });
  expect(n.status).toBe(201);
  expect((await call(s.url, "POST", "/api/svm/svms?return_timeout=30", { name: "svm1" })).status).toBe(201);
  expect(Number(await pragma("synchronous"))).toBe(1);
  expect(await pragma("journal_mode")).toBe("wal");
});

it.skipIf(onPostgres)("rolls a failed transaction back and keeps serving", async () => {
  expect((await call(s.url, "POST", "/api/svm/svms?return_timeout=30", { name: "kept" })).status).toBe(201);
  await expect(
    s.ctx.db.$transaction(async (tx) => {
      await tx.svm.create({ data: { uuid: "rolled-back", name: "rolled_back" } });
      throw new Error("abort");
    }),
  ).rejects.toThrow("abort");
  expect(await s.ctx.db.svm.findUnique({ where: { uuid: "rolled-back" } })).toBeNull();
  expect((await call(s.url, "GET", "/api/svm/svms?name=kept")).body.num_records).toBe(1);
});
