import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controllerTopic, projectTopic, type EmulationEvent } from "../../src/emulation/core/events.js";
import type { Topic } from "../../src/platform/events.js";
import { asGns3 } from "../support/gns3-events.js";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { unzip } from "./archive-support.js";

const end = (node_id: string, port_number = 0) => ({ node_id, adapter_number: 0, port_number });

/** Records bus events of one channel. */
function record(s: TestServer, topic: Topic<EmulationEvent>) {
  const sub = s.ctx.bus.subscribe(topic);
  const seen: { action: string; event: any }[] = [];
  void (async () => {
    for await (const e of sub) seen.push(asGns3(s.ctx, e));
  })();
  return {
    seen,
    async until(action: string) {
      for (let i = 0; i < 200 && !seen.some((e) => e.action === action); i++) await new Promise((r) => setTimeout(r, 10));
      return seen;
    },
    close: () => sub.return?.(),
  };
}

describe("GNS3 snapshots", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  let labs = 0;
  /**
   * Each test's own project: PC1, SW1 and HUB1, the link PC1 – SW1, a file hello.txt ("v1") and, unless asked
   * not to, the snapshot snap1 of that state.
   */
  const lab = async ({ snapshot = true } = {}) => {
    const name = `ref${++labs}`;
    const { body } = await call(s.url, "POST", "/v2/projects", { name });
    const pid: string = body.project_id;
    const P = `/v2/projects/${pid}`;
    const node = async (fields: object) => {
      const r = await call(s.url, "POST", `${P}/nodes`, { compute_id: "local", ...fields });
      expect(r.status).toBe(201);
      return r.body.node_id as string;
    };
    const pc1 = await node({ name: "PC1", node_type: "vpcs" });
    const sw = await node({ name: "SW1", node_type: "ethernet_switch" });
    const hub = await node({ name: "HUB1", node_type: "ethernet_hub" });
    expect((await call(s.url, "POST", `${P}/links`, { nodes: [end(pc1), end(sw)] })).status).toBe(201);
    expect((await call(s.url, "POST", `${P}/files/hello.txt`, "v1")).status).toBe(201);
    let snap1: any;
    if (snapshot) {
      const r = await call(s.url, "POST", `${P}/snapshots`, { name: "snap1" });
      expect(r.status).toBe(201);
      snap1 = r.body;
    }
    return { name, pid, P, dir: body.path as string, pc1, sw, hub, snap1 };
  };

  it("refuses a snapshot while a non-builtin node runs (409); running switches and hubs do not count", async () => {
    const { P, pc1, sw } = await lab({ snapshot: false });
    await s.ctx.db.node.update({ where: { id: pc1 }, data: { status: "started" } });
    await s.ctx.db.node.update({ where: { id: sw }, data: { status: "started" } });
    const r = await call(s.url, "POST", `${P}/snapshots`, { name: "snap-running" });
    expect(r).toMatchObject({ status: 409, body: { message: "Project must be stopped in order to take a snapshot", status: 409 } });
    await s.ctx.db.node.update({ where: { id: pc1 }, data: { status: "stopped" } });
  });

  it("creates a snapshot: GNS3's object, an uncompressed archive and snapshots.conf", async () => {
    const { name, pid, P, dir } = await lab({ snapshot: false });
    const before = Math.floor(Date.now() / 1000);
    const r = await call(s.url, "POST", `${P}/snapshots`, { name: "snap1" });
    expect(r.status).toBe(201);
    const snap1 = r.body;
    expect(Object.keys(snap1).sort()).toEqual(["created_at", "description", "filename", "name", "project_id", "snapshot_id"]);
    expect(snap1).toMatchObject({ name: "snap1", filename: "snap1.gns3snapshot", project_id: pid });
    expect(snap1.created_at).toBeGreaterThanOrEqual(before);
    expect(snap1.description).toMatch(/^Snapshot 'snap1' taken on \d{4}-\d\d-\d\d at \d\d:\d\d:\d\d$/);

    const file = path.join(dir, "snapshots", "snap1.gns3snapshot");
    const entries = await unzip(fs.readFileSync(file));
    expect(entries[0].name).toBe("project.gns3");
    expect(entries.every((e) => e.method === 0)).toBe(true);
    expect(entries.map((e) => e.name)).toContain("hello.txt");
    expect(entries.map((e) => e.name)).not.toContain(`${name}.gns3`);
    const doc = JSON.parse(entries[0].data.toString());
    expect(doc.topology.nodes.map((n: any) => n.name).sort()).toEqual(["HUB1", "PC1", "SW1"]);
    const conf = JSON.parse(fs.readFileSync(path.join(dir, "snapshots", "snapshots.conf"), "utf8"));
    expect(conf).toEqual([snap1]);
  });

  it("rejects a duplicate name (409), a missing name and a non-string name (400)", async () => {
    const { P, dir } = await lab();
    expect(await call(s.url, "POST", `${P}/snapshots`, { name: "snap1" })).toMatchObject({
      status: 409,
      body: { message: "The snapshot name snap1 already exists", status: 409 },
    });
    const missing = await call(s.url, "POST", `${P}/snapshots`, {});
    expect(missing.body).toEqual({
      message: `JSON schema error with API request '${P}/snapshots' and JSON data '{}': 'name' is a required property`,
      method: "POST",
      path: "/v2/projects/{project_id}/snapshots",
      request: {},
      status: 400,
    });
    const numeric = await call(s.url, "POST", `${P}/snapshots`, { name: 42 });
    expect(numeric.status).toBe(400);
    expect(numeric.body.message).toMatch(/42 is not of type 'string'$/);
    expect((await call(s.url, "POST", `${P}/snapshots`, { name: "x", extra: 1 })).status).toBe(400);
    const escaping = await call(s.url, "POST", `${P}/snapshots`, { name: "../../escape" });
    expect(escaping).toMatchObject({ status: 403, body: { message: "Snapshot name ../../escape must not contain / or \\", status: 403 } });
    expect(fs.existsSync(path.join(dir, "..", "escape.gns3snapshot"))).toBe(false);
    expect((await call(s.url, "POST", "/v2/projects/692c077c-27e9-405b-9f7b-e929348a27c2/snapshots", { name: "a" })).status).toBe(404);
  });

  it("keeps a given description, lists by creation time then name", async () => {
    const { P } = await lab();
    const r = await call(s.url, "POST", `${P}/snapshots`, { name: "snap2", description: "second" });
    expect(r.status).toBe(201);
    expect(r.body.description).toBe("second");
    const list = await call(s.url, "GET", `${P}/snapshots`);
    expect(list.status).toBe(200);
    expect(list.body.map((x: any) => x.name)).toEqual(["snap1", "snap2"]);
    expect((await call(s.url, "GET", `${P}/stats`)).body).toEqual({ nodes: 3, links: 1, drawings: 0, snapshots: 2 });
  });

  it("restores: topology and files come back with their ids, events on both streams", async () => {
    const { name, pid, P, pc1, sw, hub, snap1 } = await lab();
    expect((await call(s.url, "DELETE", `${P}/nodes/${hub}`)).status).toBe(204);
    const links = (await call(s.url, "GET", `${P}/links`)).body;
    expect((await call(s.url, "DELETE", `${P}/links/${links[0].link_id}`)).status).toBe(204);
    await call(s.url, "POST", `${P}/files/hello.txt`, "v2");

    const projectEvents = record(s, projectTopic(pid));
    const controller = record(s, controllerTopic);
    const r = await call(s.url, "POST", `${P}/snapshots/${snap1.snapshot_id}/restore`);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ project_id: pid, name, status: "opened", filename: `${name}.gns3` });

    const nodes = (await call(s.url, "GET", `${P}/nodes`)).body;
    expect(nodes.map((n: any) => n.node_id).sort()).toEqual([pc1, sw, hub].sort());
    const restoredLinks = (await call(s.url, "GET", `${P}/links`)).body;
    expect(restoredLinks).toHaveLength(1);
    expect(restoredLinks[0].link_id).toBe(links[0].link_id);
    expect((await call(s.url, "GET", `${P}/files/hello.txt`)).text).toBe("v1");

    const seen = await projectEvents.until("snapshot.restored");
    expect(seen.map((e) => e.action)).toEqual(["node.created", "node.created", "node.created", "link.created", "snapshot.restored"]);
    expect(seen.at(-1)!.event).toEqual(snap1);
    expect(seen[0].event).toMatchObject({ project_id: pid, ports: expect.any(Array) });
    const ctrl = await controller.until("project.opened");
    expect(ctrl.map((e) => e.action)).toEqual(["project.opened"]);
    projectEvents.close();
    controller.close();
  });

  it("restores the topology after the project was renamed (upstream does not)", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "ref-full" });
    const Q = `/v2/projects/${p.project_id}`;
    const a = (await call(s.url, "POST", `${Q}/nodes`, { compute_id: "local", name: "A", node_type: "vpcs" })).body.node_id;
    expect((await call(s.url, "PUT", Q, { name: "ref-full-renamed" })).status).toBe(200);
    const snap = (await call(s.url, "POST", `${Q}/snapshots`, { name: "renamed" })).body;
    await call(s.url, "POST", `${Q}/nodes`, { compute_id: "local", name: "B", node_type: "vpcs" });
    await s.ctx.db.drawing.create({ data: { id: "9a3ab237-801c-4e43-8923-62c263805593", projectId: p.project_id, svg: "<svg/>" } });
    expect((await call(s.url, "GET", `${Q}/stats`)).body).toMatchObject({ nodes: 2, drawings: 1 });

    const r = await call(s.url, "POST", `${Q}/snapshots/${snap.snapshot_id}/restore`);
    expect(r.body).toMatchObject({ name: "ref-full-renamed", filename: "ref-full.gns3" });
    expect((await call(s.url, "GET", `${Q}/nodes`)).body.map((n: any) => n.node_id)).toEqual([a]);
    expect((await call(s.url, "GET", `${Q}/stats`)).body).toMatchObject({ nodes: 1, drawings: 0 });
    const onDisk = JSON.parse(fs.readFileSync(path.join(p.path, "ref-full.gns3"), "utf8"));
    expect(onDisk.name).toBe("ref-full-renamed");
    expect(onDisk.topology.nodes.map((n: any) => n.name)).toEqual(["A"]);
    expect(fs.existsSync(path.join(p.path, "ref-full-renamed.gns3"))).toBe(false);
  });

  it("refuses to restore over running nodes (409)", async () => {
    const { P, pc1, snap1 } = await lab();
    await s.ctx.db.node.update({ where: { id: pc1 }, data: { status: "started" } });
    const r = await call(s.url, "POST", `${P}/snapshots/${snap1.snapshot_id}/restore`);
    expect(r.body).toEqual({ message: "Project must be stopped in order to restore a snapshot", status: 409 });
    await s.ctx.db.node.update({ where: { id: pc1 }, data: { status: "stopped" } });
  });

  it("404s unknown snapshots, deletes (204) then 404s", async () => {
    const { P, dir, snap1 } = await lab();
    expect((await call(s.url, "POST", `${P}/snapshots`, { name: "snap2", description: "second" })).status).toBe(201);
    const unknown = "595d84b0-e118-44b8-95a3-d7d77b91deb4";
    expect(await call(s.url, "POST", `${P}/snapshots/${unknown}/restore`)).toMatchObject({
      status: 404,
      body: { message: `Snapshot ID ${unknown} doesn't exist`, status: 404 },
    });
    const list = (await call(s.url, "GET", `${P}/snapshots`)).body;
    const snap2 = list.find((x: any) => x.name === "snap2");
    expect((await call(s.url, "DELETE", `${P}/snapshots/${snap2.snapshot_id}`)).status).toBe(204);
    expect(fs.existsSync(path.join(dir, "snapshots", "snap2.gns3snapshot"))).toBe(false);
    expect((await call(s.url, "DELETE", `${P}/snapshots/${snap2.snapshot_id}`)).body).toEqual({
      message: `Snapshot ID ${snap2.snapshot_id} doesn't exist`,
      status: 404,
    });
    expect((await call(s.url, "GET", `${P}/snapshots`)).body).toEqual([snap1]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "snapshots", "snapshots.conf"), "utf8"))).toEqual([snap1]);
  });

  it("lists snapshots of a closed project but refuses to change them (403)", async () => {
    const { P, snap1 } = await lab();
    await call(s.url, "POST", `${P}/close`);
    expect((await call(s.url, "GET", `${P}/snapshots`)).body).toEqual([snap1]);
    expect((await call(s.url, "GET", `${P}/stats`)).body).toEqual({ nodes: 0, links: 0, drawings: 0, snapshots: 1 });
    for (const [m, u] of [["POST", "/snapshots"], ["DELETE", `/snapshots/${snap1.snapshot_id}`], ["POST", `/snapshots/${snap1.snapshot_id}/restore`]]) {
      const r = await call(s.url, m, `${P}${u}`, m === "POST" && u === "/snapshots" ? { name: "z" } : undefined);
      expect(r, `${m} ${u}`).toMatchObject({ status: 403, body: { message: "The project is not opened" } });
    }
    await call(s.url, "POST", `${P}/open`);
  });

  it("works through GraphQL: Relay nodes, one input per mutation, typed errors", async () => {
    const { pid } = await lab();
    const CREATE = `mutation($p: ID!) { createSnapshot(input: { projectId: $p, name: "g1" }) {
      __typename ... on CreateSnapshotPayload { snapshot { id snapshotId name filename createdAt project { projectId } } } ... on Error { code message } } }`;
    const c = await gql(s.url, CREATE, { p: globalId("Project", pid) });
    const snap = c.data.createSnapshot.snapshot;
    expect(snap).toMatchObject({ id: globalId("Snapshot", snap.snapshotId), name: "g1", filename: "g1.gns3snapshot", project: { projectId: pid } });
    expect(new Date(snap.createdAt).getTime()).toBeGreaterThan(0);
    const dupe = await gql(s.url, CREATE, { p: pid });
    expect(dupe.data.createSnapshot).toEqual({ __typename: "ConflictError", code: "ALREADY_EXISTS", message: "The snapshot name g1 already exists" });
    const listed = await gql(s.url, `query($p: ID!) { project(id: $p) { snapshots { edges { node { name } } } } }`, { p: pid });
    expect(nodesOf(listed.data.project.snapshots).map((x: any) => x.name).sort()).toEqual(["g1", "snap1"]);
    const found = await gql(s.url, `query($id: ID!) { node(id: $id) { ... on Snapshot { name } } }`, { id: snap.id });
    expect(found.data.node).toEqual({ name: "g1" });
    // The snapshot's id alone names it (its global id or its GNS3 id); the payload is the restored project.
    const restored = await gql(s.url, `mutation($id: ID!) { restoreSnapshot(input: { id: $id }) { ... on RestoreSnapshotPayload { project { projectId status } } } }`, {
      id: snap.snapshotId,
    });
    expect(restored.data.restoreSnapshot.project).toEqual({ projectId: pid, status: "OPENED" });
    const DELETE = `mutation($id: ID!) { deleteSnapshot(input: { id: $id }) { __typename ... on DeleteSnapshotPayload { deletedIds } ... on Error { code message } } }`;
    expect((await gql(s.url, DELETE, { id: snap.id })).data.deleteSnapshot).toEqual({ __typename: "DeleteSnapshotPayload", deletedIds: [snap.id] });
    expect((await gql(s.url, DELETE, { id: snap.id })).data.deleteSnapshot).toEqual({
      __typename: "NotFoundError",
      code: "NOT_FOUND",
      message: `Snapshot ID ${snap.snapshotId} doesn't exist`,
    });
  });
});
