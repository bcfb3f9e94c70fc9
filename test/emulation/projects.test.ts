import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controllerTopic, projectTopic } from "../../src/emulation/core/events.js";
import { asGns3 } from "../support/gns3-events.js";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";

const DEFAULTS = {
  auto_close: true,
  auto_open: false,
  auto_start: false,
  drawing_grid_size: 25,
  grid_size: 75,
  scene_height: 1000,
  scene_width: 2000,
  show_grid: false,
  show_interface_labels: false,
  show_layers: false,
  snap_to_grid: false,
  supplier: null,
  variables: null,
  zoom: 100,
};

/** Collects controller events published on the bus until `take` is called. */
function controllerEvents(s: TestServer) {
  const sub = s.ctx.bus.subscribe(controllerTopic);
  const seen: { action: string; event: any }[] = [];
  void (async () => {
    for await (const e of sub) seen.push(asGns3(s.ctx, e));
  })();
  return {
    async take(n: number) {
      for (let i = 0; i < 100 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 10));
      return seen.splice(0, seen.length);
    },
    close: () => sub.return?.(),
  };
}

describe("GNS3 projects", () => {
  let s: TestServer;
  /** A directory local mode may use besides the projects folder (PATCHBAY_ALLOWED_ROOTS). */
  const roots = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-roots-"));
  beforeAll(async () => void (s = await startTestServer({ uploadLimit: "1mb", local: true, allowedRoots: [roots] })));
  afterAll(() => s.close());

  it("creates a project with GNS3's defaults, its directory and topology file, and announces it", async () => {
    const events = controllerEvents(s);
    const r = await call(s.url, "POST", "/v2/projects", { name: "ref1" });
    expect(r.status).toBe(201);
    expect(r.headers.get("x-route")).toBe("/v2/projects");
    const id = r.body.project_id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const dir = path.join(s.dataDir, "projects", id);
    expect(r.body).toEqual({ ...DEFAULTS, filename: "ref1.gns3", name: "ref1", path: dir, project_id: id, status: "opened" });
    expect(r.text.split("\n")[1]).toBe('    "auto_close": true,'); // sorted keys, 4-space indent
    const topo = JSON.parse(fs.readFileSync(path.join(dir, "ref1.gns3"), "utf8"));
    expect(topo).toMatchObject({ project_id: id, name: "ref1", type: "topology", revision: 9, version: "2.2.59" });
    expect(topo.topology).toEqual({ nodes: [], links: [], drawings: [], computes: [] });
    const [e] = await events.take(1);
    expect(e).toEqual({ action: "project.created", event: r.body });
    events.close();
  });

  it("accepts every property, and returns an existing project for a known project_id (201)", async () => {
    const full = {
      name: "ref-full",
      project_id: "11111111-2222-4333-8444-555555555555",
      auto_close: false,
      auto_open: false,
      auto_start: false,
      scene_height: 500,
      scene_width: 700,
      zoom: 80,
      show_layers: true,
      snap_to_grid: true,
      show_grid: true,
      grid_size: 50,
      drawing_grid_size: 10,
      show_interface_labels: true,
      supplier: { logo: "logo.png", url: "http://example.com" },
      variables: [{ name: "A" }, { name: "B", value: "b" }],
    };
    const r = await call(s.url, "POST", "/v2/projects", full);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ ...full, filename: "ref-full.gns3", status: "opened" });
    const again = await call(s.url, "POST", "/v2/projects", { name: "other-name", project_id: full.project_id });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(r.body);
  });

  it("refuses a duplicate name (409) and bad input (400, GNS3 wording)", async () => {
    expect((await call(s.url, "POST", "/v2/projects", { name: "taken-name" })).status).toBe(201);
    expect(await call(s.url, "POST", "/v2/projects", { name: "taken-name" })).toMatchObject({
      status: 409,
      body: { message: 'Project "taken-name" already exists', status: 409 },
    });
    const missing = await call(s.url, "POST", "/v2/projects", {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      message: "JSON schema error with API request '/v2/projects' and JSON data '{}': 'name' is a required property",
      method: "POST",
      path: "/v2/projects",
      request: {},
      status: 400,
    });
    const badId = await call(s.url, "POST", "/v2/projects", { name: "x", project_id: "not-a-uuid" });
    expect(badId.body.message).toMatch(/: 'not-a-uuid' is too short$/);
    const unknown = await call(s.url, "POST", "/v2/projects", { name: "x", foo: 1 });
    expect(unknown.body.message).toMatch(/Additional properties are not allowed \('foo' was unexpected\)$/);
    const wrongType = await call(s.url, "POST", "/v2/projects", { name: "x", zoom: "big" });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toMatch(/: 'big' is not of type '\w+'$/);
    const query = await call(s.url, "POST", "/v2/projects?foo=1", { name: "x" });
    expect(query.status).toBe(400);
    const junk = await call(s.url, "POST", "/v2/projects", "{not json");
    expect(junk.status).toBe(400);
    expect(junk.body.request).toEqual({ malformed_json: "{not json" });
    expect((await call(s.url, "GET", "/v2/projects")).body.map((p: any) => p.name)).not.toContain("x");
  });

  it("creates a project in a chosen directory on a local server, refusing an existing one without project_id", async () => {
    const taken = path.join(roots, "taken");
    fs.mkdirSync(taken);
    expect(await call(s.url, "POST", "/v2/projects", { name: "here", path: taken })).toMatchObject({
      status: 403,
      body: { message: `The path ${taken} already exist.`, status: 403 },
    });
    const fresh = path.join(roots, "custom", "here");
    const r = await call(s.url, "POST", "/v2/projects", { name: "here", path: fresh });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe(fresh);
    expect(fs.existsSync(path.join(fresh, "here.gns3"))).toBe(true);
    expect((await call(s.url, "POST", `/v2/projects/${r.body.project_id}/files/x.txt`, "x")).status).toBe(201);
    expect(fs.readFileSync(path.join(fresh, "x.txt"), "utf8")).toBe("x");
    expect((await call(s.url, "POST", "/v2/projects", { name: "quoted", path: '/tmp/a"b' })).status).toBe(403);
    expect((await call(s.url, "PUT", `/v2/projects/${r.body.project_id}`, { path: path.join(roots, "moved") })).status).toBe(409);
  });

  it("refuses oversized bodies with 413", async () => {
    const r = await call(s.url, "POST", "/v2/projects", { name: "big", pad: "x".repeat(2 * 1024 * 1024) });
    expect(r.status).toBe(413);
  });

  it("lists in insertion order, gets one, 404s unknown and non-UUID ids", async () => {
    // Names out of alphabetical order; other tests' projects come before them, none after.
    const names = ["order-c", "order-a", "order-b"];
    for (const name of names) expect((await call(s.url, "POST", "/v2/projects", { name })).status).toBe(201);
    const list = await call(s.url, "GET", "/v2/projects");
    expect(list.status).toBe(200);
    expect(list.body.map((p: any) => p.name).slice(-3)).toEqual(names);
    const one = await call(s.url, "GET", `/v2/projects/${list.body[0].project_id}`);
    expect(one.body).toEqual(list.body[0]);
    expect(one.headers.get("x-route")).toBe("/v2/projects/{project_id}");
    const unknown = "692c077c-27e9-405b-9f7b-e929348a27c2";
    expect(await call(s.url, "GET", `/v2/projects/${unknown}`)).toMatchObject({
      status: 404,
      body: { message: `Project ID ${unknown} doesn't exist`, status: 404 },
    });
    expect((await call(s.url, "GET", "/v2/projects/not-a-uuid")).body.message).toBe("Project ID not-a-uuid doesn't exist");
    for (const [m, u] of [["PUT", ""], ["DELETE", ""], ["POST", "/open"], ["POST", "/close"], ["GET", "/stats"], ["POST", "/duplicate"], ["GET", "/export"]]) {
      const r = await call(s.url, m, `/v2/projects/${unknown}${u}`, m === "POST" && u === "/duplicate" ? { name: "d" } : m === "PUT" ? {} : undefined);
      expect(r.status, `${m} ${u}`).toBe(404);
    }
  });

  it("updates partially, keeps the filename on rename, emits project.updated only on change", async () => {
    const created = await call(s.url, "POST", "/v2/projects", { name: "upd-src", zoom: 80, scene_width: 700 });
    expect(created.status).toBe(201);
    const id = created.body.project_id;
    expect((await call(s.url, "POST", "/v2/projects", { name: "upd-other" })).status).toBe(201);
    const events = controllerEvents(s);
    const r = await call(s.url, "PUT", `/v2/projects/${id}`, { name: "upd-renamed", scene_width: 3000 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: "upd-renamed", filename: "upd-src.gns3", scene_width: 3000, zoom: 80 });
    const noop = await call(s.url, "PUT", `/v2/projects/${id}`, { scene_width: 3000 });
    expect(noop.status).toBe(200);
    const seen = await events.take(1);
    expect(seen).toEqual([{ action: "project.updated", event: r.body }]);
    events.close();
    expect((await call(s.url, "PUT", `/v2/projects/${id}`, { status: "closed" })).body.message).toMatch(
      /Additional properties are not allowed \('status' was unexpected\)$/,
    );
    const withId = await call(s.url, "PUT", `/v2/projects/${id}`, { project_id: id });
    expect(withId.status).toBe(400);
    expect(withId.body.path).toBe("/v2/projects/{project_id}");
    expect((await call(s.url, "PUT", `/v2/projects/${id}`, { name: "upd-other" })).status).toBe(409);
    const topo = JSON.parse(fs.readFileSync(path.join(s.dataDir, "projects", id, "upd-src.gns3"), "utf8"));
    expect(topo).toMatchObject({ name: "upd-renamed", scene_width: 3000 });
  });

  it("closes (204, idempotent) and opens (201) with controller events; stats follow the status", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "openclose" });
    const P = `/v2/projects/${p.project_id}`;
    expect((await call(s.url, "GET", `${P}/stats`)).body).toEqual({ drawings: 0, links: 0, nodes: 0, snapshots: 0 });
    const events = controllerEvents(s);
    const closed = await call(s.url, "POST", `${P}/close`);
    expect(closed.status).toBe(204);
    expect(closed.text).toBe("");
    expect((await call(s.url, "POST", `${P}/close`)).status).toBe(204);
    expect((await call(s.url, "GET", P)).body.status).toBe("closed");
    const opened = await call(s.url, "POST", `${P}/open`);
    expect(opened.status).toBe(201);
    expect(opened.body.status).toBe("opened");
    expect((await call(s.url, "POST", `${P}/open`)).status).toBe(201);
    const seen = await events.take(2);
    expect(seen.map((e) => [e.action, e.event.status])).toEqual([
      ["project.closed", "closed"],
      ["project.opened", "opened"],
    ]);
    events.close();
  });

  it("opening announces the topology and drops half-created links", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "announce" });
    const P = `/v2/projects/${p.project_id}`;
    const pc = (await call(s.url, "POST", `${P}/nodes`, { compute_id: "local", name: "PC1", node_type: "vpcs" })).body.node_id;
    const sw = (await call(s.url, "POST", `${P}/nodes`, { compute_id: "local", name: "SW1", node_type: "ethernet_switch" })).body.node_id;
    const end = (node_id: string, port_number: number) => ({ node_id, adapter_number: 0, port_number });
    const full = (await call(s.url, "POST", `${P}/links`, { nodes: [end(pc, 0), end(sw, 0)] })).body.link_id;
    const half = (await call(s.url, "POST", `${P}/links`, { nodes: [end(sw, 1)] })).body.link_id;
    await call(s.url, "POST", `${P}/close`);
    const sub = s.ctx.bus.subscribe(projectTopic(p.project_id));
    const seen: any[] = [];
    void (async () => {
      for await (const e of sub) seen.push(asGns3(s.ctx, e));
    })();
    await call(s.url, "POST", `${P}/open`);
    for (let i = 0; i < 100 && seen.length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    sub.return?.();
    expect(seen.map((e) => [e.action, e.event.node_id ?? e.event.link_id])).toEqual([
      ["link.deleted", half],
      ["node.created", pc],
      ["node.created", sw],
      ["link.created", full],
    ]);
    expect((await call(s.url, "GET", `${P}/links`)).body.map((l: any) => l.link_id)).toEqual([full]);
  });

  it("refuses snapshot and other project-scoped mutations on a closed project (403)", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "closed-guard" });
    const P = `/v2/projects/${p.project_id}`;
    await call(s.url, "POST", `${P}/close`);
    expect(await call(s.url, "POST", `${P}/snapshots`, { name: "s" })).toMatchObject({
      status: 403,
      body: { message: "The project is not opened", status: 403 },
    });
    // Reads and project-level writes still work on a closed project.
    expect((await call(s.url, "GET", `${P}/snapshots`)).body).toEqual([]);
    expect((await call(s.url, "PUT", P, { zoom: 50 })).body.zoom).toBe(50);
    expect((await call(s.url, "POST", `${P}/files/a.txt`, "hi")).status).toBe(201);
  });

  it("deletes a project and its directory: closed then deleted events, then 404", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "doomed" });
    const events = controllerEvents(s);
    const r = await call(s.url, "DELETE", `/v2/projects/${p.project_id}`);
    expect(r.status).toBe(204);
    expect(fs.existsSync(p.path)).toBe(false);
    expect((await events.take(2)).map((e) => e.action)).toEqual(["project.closed", "project.deleted"]);
    events.close();
    expect((await call(s.url, "DELETE", `/v2/projects/${p.project_id}`)).body.message).toBe(`Project ID ${p.project_id} doesn't exist`);
    // The name is free again.
    expect((await call(s.url, "POST", "/v2/projects", { name: "doomed" })).status).toBe(201);
  });

  it("duplicates into a closed copy with a new id and GNS3's auto_* flags, names colliding as <name>-1", async () => {
    const { body: src } = await call(s.url, "POST", "/v2/projects", { name: "dup-src", auto_close: true, scene_width: 1234 });
    const P = `/v2/projects/${src.project_id}`;
    const events = controllerEvents(s);
    const d = await call(s.url, "POST", `${P}/duplicate`, { name: "dup-ref" });
    expect(d.status).toBe(201);
    expect(d.body).toMatchObject({ name: "dup-ref", filename: "dup-ref.gns3", status: "closed", auto_close: false, auto_open: false, auto_start: false, scene_width: 1234 });
    expect(d.body.project_id).not.toBe(src.project_id);
    expect((await events.take(1)).map((e) => [e.action, e.event.project_id])).toEqual([["project.created", d.body.project_id]]);
    events.close();
    const d2 = await call(s.url, "POST", `${P}/duplicate`, { name: "dup-ref" });
    expect(d2.body.name).toBe("dup-ref-1");
    const noName = await call(s.url, "POST", `${P}/duplicate`, {});
    expect(noName.body).toMatchObject({ status: 400, path: "/v2/projects/{project_id}/duplicate" });
    expect(noName.body.message).toMatch(/'name' is a required property$/);
  });

  it("loads a .gns3 file in local mode (409 when unreadable, 400 without path), and reopens a known one", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "loadme" });
    const file = path.join(p.path, "loadme.gns3");
    await call(s.url, "POST", `/v2/projects/${p.project_id}/close`);
    const again = await call(s.url, "POST", "/v2/projects/load", { path: file });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ project_id: p.project_id, status: "opened" });

    const missing = path.join(roots, "nonexistent.gns3");
    const r = await call(s.url, "POST", "/v2/projects/load", { path: missing });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(new RegExp(`^Could not load topology ${missing}: `));
    expect((await call(s.url, "POST", "/v2/projects/load", {})).body.message).toMatch(/'path' is a required property$/);

    // A topology file of a project this server has never seen becomes an opened project where it lies.
    const elsewhere = path.join(roots, "elsewhere");
    fs.mkdirSync(elsewhere);
    const foreignId = "0d475a0b-cc95-4699-8e1f-3e3ed7ccf2b2";
    const doc = JSON.parse(fs.readFileSync(file, "utf8"));
    Object.assign(doc, { project_id: foreignId, name: "foreign" });
    fs.writeFileSync(path.join(elsewhere, "foreign.gns3"), JSON.stringify(doc));
    const loaded = await call(s.url, "POST", "/v2/projects/load", { path: path.join(elsewhere, "foreign.gns3") });
    expect(loaded.status).toBe(201);
    expect(loaded.body).toMatchObject({ project_id: foreignId, name: "foreign", path: elsewhere, filename: "foreign.gns3", status: "opened" });
    // Not under the projects directory: GNS3 refuses to delete it.
    const del = await call(s.url, "DELETE", `/v2/projects/${foreignId}`);
    expect(del.status).toBe(409);
    expect(del.body.message).toMatch(/cannot be deleted because it is not in the default project directory/);

    doc.revision = 10;
    doc.project_id = "0d475a0b-cc95-4699-8e1f-3e3ed7ccf2b3";
    fs.writeFileSync(path.join(elsewhere, "newer.gns3"), JSON.stringify(doc));
    const newer = await call(s.url, "POST", "/v2/projects/load", { path: path.join(elsewhere, "newer.gns3") });
    expect(newer.status).toBe(409);
    expect(newer.body.message).toMatch(/created with more recent version of GNS3/);
  });

  it("serves project files (text/plain for .txt, Content-Length, Last-Modified) and writes them (201)", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "files" });
    const P = `/v2/projects/${p.project_id}`;
    const noParent = await call(s.url, "POST", `${P}/files/notes/hello.txt`, "hello world");
    expect(noParent).toMatchObject({ status: 404, body: { message: "404: Not Found", status: 404 } });
    const w = await call(s.url, "POST", `${P}/files/hello.txt`, "hello world");
    expect(w.status).toBe(201);
    expect(w.headers.get("content-type")).toBe("application/octet-stream");
    const r = await call(s.url, "GET", `${P}/files/hello.txt`);
    expect(r.status).toBe(200);
    expect(r.text).toBe("hello world");
    expect(r.headers.get("content-type")).toBe("text/plain");
    expect(r.headers.get("content-length")).toBe("11");
    expect(r.headers.get("last-modified")).toMatch(/GMT$/);
    expect(r.headers.get("x-route")).toBe("/v2/projects/{project_id}/files/{path:.+}");
    expect(await call(s.url, "GET", `${P}/files/missing.txt`)).toMatchObject({ status: 404, body: { message: "404: Not Found", status: 404 } });
    const topo = await call(s.url, "GET", `${P}/files/files.gns3`);
    expect(topo.headers.get("content-type")).toBe("application/octet-stream");
    expect(JSON.parse(topo.text)).toMatchObject({ project_id: p.project_id, revision: 9 });
    const unknown = await call(s.url, "GET", "/v2/projects/692c077c-27e9-405b-9f7b-e929348a27c2/files/a.txt");
    expect(unknown.status).toBe(404);
    const big = await call(s.url, "POST", `${P}/files/big.bin`, "x".repeat(2 * 1024 * 1024));
    expect(big.status).toBe(413);
    expect(fs.existsSync(path.join(p.path, "big.bin"))).toBe(false);
  });

  it("exposes projects through GraphQL: a Relay node, one input per mutation, typed errors", async () => {
    const created = await gql(
      s.url,
      `mutation($input: CreateProjectInput!) { createProject(input: $input) {
        __typename ... on CreateProjectPayload { project { id projectId name status sceneWidthPixels filename autoClose } }
        ... on Error { message } } }`,
      { input: { name: "gql1", sceneWidthPixels: 900 } },
    );
    expect(created.errors).toBeUndefined();
    const p = created.data.createProject.project;
    expect(p).toMatchObject({ id: globalId("Project", p.projectId), name: "gql1", status: "OPENED", sceneWidthPixels: 900, filename: "gql1.gns3", autoClose: true });
    const dup = await gql(s.url, `mutation { createProject(input: {name: "gql1"}) { __typename ... on Error { code message } } }`);
    expect(dup.data.createProject).toEqual({ __typename: "ConflictError", code: "ALREADY_EXISTS", message: 'Project "gql1" already exists' });

    const upd = await gql(
      s.url,
      `mutation($id: ID!) { updateProject(input: {id: $id, name: "gql2", zoomPercent: 120}) { ... on UpdateProjectPayload { project { name zoomPercent } } } }`,
      { id: p.id },
    );
    expect(upd.data.updateProject.project).toEqual({ name: "gql2", zoomPercent: 120 });
    const closed = await gql(s.url, `mutation($id: ID!) { closeProject(input: {id: $id}) { ... on CloseProjectPayload { project { status } } } }`, { id: p.id });
    expect(closed.data.closeProject.project.status).toBe("CLOSED");
    // The GNS3 project_id names it too.
    const opened = await gql(s.url, `mutation($id: ID!) { openProject(input: {id: $id}) { ... on OpenProjectPayload { project { status } } } }`, { id: p.projectId });
    expect(opened.data.openProject.project.status).toBe("OPENED");
    const q = await gql(s.url, `query($id: ID!) { project(id: $id) { name snapshots { edges { node { name } } } } projects(first: 100) { edges { node { id } } } }`, { id: p.id });
    expect(q.data.project).toEqual({ name: "gql2", snapshots: { edges: [] } });
    expect(nodesOf(q.data.projects).map((x: any) => x.id)).toContain(p.id);
    const dupe = await gql(
      s.url,
      `mutation($id: ID!) { duplicateProject(input: {id: $id, name: "gql-copy"}) { ... on DuplicateProjectPayload { project { name status } } } }`,
      { id: p.id },
    );
    expect(dupe.data.duplicateProject.project).toEqual({ name: "gql-copy", status: "CLOSED" });
    const missing = await gql(s.url, `{ project(id: "nope") { id } }`);
    expect(missing.data?.project ?? null).toBeNull();
    const DELETE = `mutation($id: ID!) { deleteProject(input: {id: $id}) { __typename ... on DeleteProjectPayload { deletedIds } ... on Error { code message } } }`;
    const del = await gql(s.url, DELETE, { id: "nope" });
    expect(del.data.deleteProject).toEqual({ __typename: "NotFoundError", code: "NOT_FOUND", message: "Project ID nope doesn't exist" });
    const ok = await gql(s.url, DELETE, { id: p.id });
    expect(ok.data.deleteProject).toEqual({ __typename: "DeleteProjectPayload", deletedIds: [p.id] });
  });
});

describe("GNS3 projects on a non-local server", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer({ local: false })));
  afterAll(() => s.close());

  it("answers /v2/projects/load and custom paths with a bare 403", async () => {
    const r = await call(s.url, "POST", "/v2/projects/load", { path: "/tmp/x.gns3" });
    expect(r.status).toBe(403);
    expect(r.text).toBe("");
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "p" });
    const d = await call(s.url, "POST", `/v2/projects/${p.project_id}/duplicate`, { name: "q", path: "/tmp/q" });
    expect(d.status).toBe(403);
    expect(d.text).toBe("");
    const outside = await call(s.url, "POST", "/v2/projects", { name: "out", path: "/tmp/out-of-root" });
    expect(outside).toMatchObject({ status: 403, body: { message: "The path is not allowed", status: 403 } });
  });
});
