import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 8, item 7 (emulation): concurrent writers get 201/409 in GNS3's shape, never 500, and the answers tell
 * the truth — on SQLite and PostgreSQL alike.
 */
const N = 40;

const statuses = (rs: { status: number }[]) => rs.map((r) => r.status).sort();
const count = (rs: { status: number }[], status: number) => rs.filter((r) => r.status === status).length;

describe("concurrent emulation writes", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());

  const all = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

  it("re-posting one compute_id is a reconnection (201) for every request, and one compute exists", async () => {
    const body = { compute_id: "same-id", protocol: "http", host: "127.0.0.1", port: 9, name: "same" };
    const rs = await all(N, () => call(s.url, "POST", "/v2/computes", body));
    expect(statuses(rs)).toEqual(Array(N).fill(201));
    expect(rs.every((r) => r.body.compute_id === "same-id" && r.body.name === "same")).toBe(true);
    const list = (await call(s.url, "GET", "/v2/computes")).body.filter((c: { compute_id: string }) => c.compute_id === "same-id");
    expect(list).toHaveLength(1);
  });

  it("one compute name, many ids: one 201, the rest GNS3's 409", async () => {
    const rs = await all(N, (i) => call(s.url, "POST", "/v2/computes", { compute_id: `n${i}`, protocol: "http", host: "127.0.0.1", port: 9, name: "contested" }));
    expect(count(rs, 201)).toBe(1);
    expect(count(rs, 409)).toBe(N - 1);
    for (const r of rs.filter((x) => x.status === 409)) expect(r.body).toEqual({ message: 'Compute name "contested" already exists', status: 409 });
  });

  it("one project name: one 201, the rest 409; one project_id: 201 with that project for every request", async () => {
    const byName = await all(N, () => call(s.url, "POST", "/v2/projects", { name: "contested" }));
    expect(count(byName, 201)).toBe(1);
    expect(count(byName, 409)).toBe(N - 1);
    for (const r of byName.filter((x) => x.status === 409)) expect(r.body).toEqual({ message: 'Project "contested" already exists', status: 409 });

    const id = "5f0c7d4e-2b1a-4c3d-9e8f-7a6b5c4d3e2f";
    const byId = await all(N, () => call(s.url, "POST", "/v2/projects", { name: "by-id", project_id: id }));
    expect(statuses(byId)).toEqual(Array(N).fill(201));
    expect(byId.every((r) => r.body.project_id === id && r.body.name === "by-id")).toBe(true);
  });

  it("snapshots: one name is one 201 and 409s; distinct names all land in snapshots.conf", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "snapped" });
    const S = `/v2/projects/${p.project_id}/snapshots`;
    const same = await all(N, () => call(s.url, "POST", S, { name: "snap" }));
    expect(count(same, 201)).toBe(1);
    expect(count(same, 409)).toBe(N - 1);
    for (const r of same.filter((x) => x.status === 409)) expect(r.body.message).toMatch(/^The snapshot (name snap|file 'snap.gns3snapshot') already exists$/);

    const distinct = await all(20, (i) => call(s.url, "POST", S, { name: `s${i}` }));
    expect(statuses(distinct)).toEqual(Array(20).fill(201));
    const conf = JSON.parse(fs.readFileSync(path.join(p.path, "snapshots", "snapshots.conf"), "utf8"));
    expect(conf.map((c: { name: string }) => c.name).sort()).toEqual(["snap", ...Array.from({ length: 20 }, (_, i) => `s${i}`)].sort());
    expect(fs.readdirSync(path.join(p.path, "snapshots")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("concurrent project updates all succeed and leave a valid topology file of the last state", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "busy" });
    const rs = await all(N, (i) => call(s.url, "PUT", `/v2/projects/${p.project_id}`, { scene_width: 1000 + i }));
    expect(statuses(rs)).toEqual(Array(N).fill(200));
    const final = (await call(s.url, "GET", `/v2/projects/${p.project_id}`)).body;
    const file = JSON.parse(fs.readFileSync(path.join(p.path, "busy.gns3"), "utf8"));
    expect(file.scene_width).toBe(final.scene_width);
    expect(fs.readdirSync(p.path).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});
