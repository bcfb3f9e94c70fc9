import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { isPostgresUrl } from "../../src/platform/db/client.js";
import { ruleIdentity } from "../../src/storage/quota-rules/identity.js";
import { call, startTestServer, type TestServer } from "../support/server.js";

/** Creates SVM svm1, volume vol1 and qtrees qt1, qt2 through the REST API; returns their uuids. */
export async function storageFixture(base: string, svm = "svm1", volume = "vol1") {
  const s = await call(base, "POST", "/api/svm/svms?return_records=true&return_timeout=5", { name: svm });
  expect(s.status, s.text).toBe(201);
  const v = await call(base, "POST", "/api/storage/volumes?return_records=true&return_timeout=5", { name: volume, "svm.name": svm });
  expect(v.status, v.text).toBe(201);
  for (const name of ["qt1", "qt2"]) {
    const q = await call(base, "POST", "/api/storage/qtrees?return_timeout=5", { svm: { name: svm }, volume: { name: volume }, name });
    expect(q.status, q.text).toBe(201);
  }
  return { svmUuid: s.body.records[0].uuid as string, volumeUuid: v.body.records[0].uuid as string };
}

/** POST a rule the way Ansible does (flat dotted keys, return_timeout=30, return_records=true). */
export async function postRule(base: string, body: Record<string, unknown>) {
  return call(base, "POST", "/api/storage/quota/rules?return_timeout=30&return_records=true", { "svm.name": "svm1", "volume.name": "vol1", ...body });
}

/** One server for the file, with the storage fixture (svm1, vol1, qt1, qt2); `take` gets them before the tests run. */
export function serverWithFixture(take: (server: TestServer, fixture: Awaited<ReturnType<typeof storageFixture>>) => void): void {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    take(server, await storageFixture(server.url));
  });
  afterAll(() => server.close());
}

/** Each test its own SVM and volume (svm<n>, vol<n>, qtrees qt1 and qt2), so the rules and events it sees are its own. */
export function volumePerTest(server: () => TestServer, take: (volume: { svm: string; volumeName: string; volumeUuid: string }) => void): void {
  let n = 0;
  beforeEach(async () => {
    n++;
    const [svm, volumeName] = [`svm${n}`, `vol${n}`];
    take({ svm, volumeName, volumeUuid: (await storageFixture(server().url, svm, volumeName)).volumeUuid });
  });
}

/**
 * `count` group rules (groups g0, g1 …) in a volume, made by one INSERT … SELECT over a generated series: a data set
 * the size a client pages through, in a second or two (through the API, one rule a request, it would take minutes;
 * Prisma's createMany, a minute). Identities are the operations' own (ruleIdentity), the group name appended.
 */
export async function seedGroupRules(server: TestServer, volume: { svmUuid: string; volumeUuid: string }, count: number) {
  const identity = ruleIdentity({ type: "group", qtreeName: null, groupName: "", groupId: null }, []);
  const uuidPrefix = `${randomUUID().slice(0, 23)}-`; // then the rule's number in 12 digits: a UUID's shape
  const params = [uuidPrefix, volume.svmUuid, volume.volumeUuid, identity, count];
  const sql = isPostgresUrl(server.databaseUrl)
    ? `INSERT INTO "QuotaRule" (uuid, "svmUuid", "volumeUuid", type, "groupName", identity)
       SELECT $1 || lpad(i::text, 12, '0'), $2, $3, 'group', 'g' || i, $4 || 'g' || i FROM generate_series(0, $5::int - 1) AS i`
    : `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?5)
       INSERT INTO QuotaRule (uuid, svmUuid, volumeUuid, type, groupName, identity)
       SELECT ?1 || printf('%012d', i), ?2, ?3, 'group', 'g' || i, ?4 || 'g' || i FROM n`;
  expect(await server.ctx.db.$executeRawUnsafe(sql, ...params)).toBe(count);
  // The statistics a server holding these rules has (SQLite: its start-up and hourly ANALYZE, platform/db/maintenance.ts;
  // PostgreSQL: autovacuum's, soon after a bulk insert). Without them a page of one volume's rules is read through the
  // identity index and a sort of all 100,000: 1,000 pages took ≈45 s instead of ≈8 (SQLite; PostgreSQL 40 s, not 10).
  await server.ctx.db.$executeRawUnsafe("ANALYZE");
}
