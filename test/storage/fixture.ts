import { afterAll, beforeAll, beforeEach, expect } from "vitest";
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
