import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";

const C = "/v2/compute/projects";

describe("emulation: compute-level projects — lifecycle", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
  });

  const create = (body: Record<string, unknown>) => call(s.url, "POST", C, body);

  it("creates, returns the existing project for a known id, lists and gets", async () => {
    const id = randomUUID();
    const r = await create({ name: "cproj", project_id: id });
    expect(r.status).toBe(201);
    expect(r.headers.get("x-route")).toBe(C);
    expect(r.body).toEqual({ name: "cproj", project_id: id, variables: null });
    expect(r.text).toBe(`{\n    "name": "cproj",\n    "project_id": "${id}",\n    "variables": null\n}`);

    const again = await create({ name: "cproj", project_id: id });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ name: "cproj", project_id: id, variables: null });

    const list = await call(s.url, "GET", C);
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual({ name: "cproj", project_id: id, variables: null });

    const got = await call(s.url, "GET", `${C}/${id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("x-route")).toBe("/v2/compute/projects/{project_id}");
    expect(got.body).toEqual({ name: "cproj", project_id: id, variables: null });

    // It is this instance's project: the controller sees it, opened, in the same directory.
    const ctrl = await call(s.url, "GET", `/v2/projects/${id}`);
    expect(ctrl.body).toMatchObject({ name: "cproj", status: "opened", path: path.join(s.dataDir, "projects", id) });
    expect(fs.existsSync(path.join(s.dataDir, "projects", id, "cproj.gns3"))).toBe(true);
  });

  it("creates without an id (a new UUID) and with the controller's settings", async () => {
    const r = await create({ name: "no-id", variables: [{ name: "A", value: "1" }], auto_close: false });
    expect(r.status).toBe(201);
    expect(r.body.project_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.variables).toEqual([{ name: "A", value: "1" }]);
  });

  it("validates the body like the controller's create schema", async () => {
    const id = randomUUID();
    const r = await create({ project_id: id });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      message: `JSON schema error with API request '/v2/compute/projects' and JSON data '{'project_id': '${id}'}': 'name' is a required property`,
      method: "POST",
      path: "/v2/compute/projects",
      request: { project_id: id },
      status: 400,
    });
    expect((await create({ name: "x", project_id: "nope" })).status).toBe(400);
    expect((await create({ name: "x", bogus: 1 })).status).toBe(400);
  });

  it("refuses names with path separators (403)", async () => {
    for (const name of ["a/b", "a\\b"]) {
      const r = await create({ name, project_id: randomUUID() });
      expect(r.status).toBe(403);
      expect(r.body.status).toBe(403);
      expect(r.body.message).toContain("must not contain");
    }
  });

  it("a name another project already has is a 409, as on the controller", async () => {
    await create({ name: "taken", project_id: randomUUID() });
    const r = await create({ name: "taken", project_id: randomUUID() });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ message: 'Project "taken" already exists', status: 409 });
  });

  it("unknown id → 404, non-UUID → 400 with GNS3's message", async () => {
    const unknown = randomUUID();
    expect(await call(s.url, "GET", `${C}/${unknown}`)).toMatchObject({
      status: 404,
      body: { message: `Project ID ${unknown} doesn't exist`, status: 404 },
    });
    const bad = await call(s.url, "GET", `${C}/not-a-uuid`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      message: "Project ID not-a-uuid is not a valid UUID",
      method: "GET",
      path: "/v2/compute/projects/{project_id}",
      request: {},
      status: 400,
    });
    for (const [method, suffix] of [["PUT", ""], ["DELETE", ""], ["POST", "/close"]] as const) {
      expect((await call(s.url, method, `${C}/${unknown}${suffix}`, method === "PUT" ? {} : undefined)).status).toBe(404);
      expect((await call(s.url, method, `${C}/not-a-uuid${suffix}`, method === "PUT" ? {} : undefined)).status).toBe(400);
    }
  });

  it("PUT uses only variables, answers 200, and keeps variables when they are omitted", async () => {
    const id = randomUUID();
    await create({ name: "vars", project_id: id });
    const vars = [{ name: "V", value: "1" }];
    const r = await call(s.url, "PUT", `${C}/${id}`, { variables: vars });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: "vars", project_id: id, variables: vars });

    const before = (await call(s.url, "GET", `/v2/projects/${id}`)).body.auto_close;
    const untouched = await call(s.url, "PUT", `${C}/${id}`, { auto_close: !before });
    expect(untouched.status).toBe(200);
    expect(untouched.body.variables).toEqual(vars);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).body.auto_close).toBe(before);

    const cleared = await call(s.url, "PUT", `${C}/${id}`, { variables: null });
    expect(cleared.body.variables).toBeNull();
    expect((await call(s.url, "PUT", `${C}/${id}`, { variables: "x" })).status).toBe(400);
  });

  it("close → 204, then the compute forgets the project (404) and the row is closed", async () => {
    const id = randomUUID();
    await create({ name: "to-close", project_id: id });
    const r = await call(s.url, "POST", `${C}/${id}/close`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await call(s.url, "POST", `${C}/${id}/close`)).body).toEqual({ message: `Project ID ${id} doesn't exist`, status: 404 });
    expect((await call(s.url, "GET", `${C}/${id}`)).status).toBe(404);
    expect((await call(s.url, "GET", C)).body.map((p: { project_id: string }) => p.project_id)).not.toContain(id);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).body.status).toBe("closed");

    // Registering it again re-opens the same project.
    const again = await create({ name: "to-close", project_id: id });
    expect(again.status).toBe(201);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).body.status).toBe("opened");
  });

  it("delete → 204, removes the project, its nodes and directory; again → 404", async () => {
    const id = randomUUID();
    await create({ name: "to-delete", project_id: id });
    const node = await call(s.url, "POST", `/v2/projects/${id}/nodes`, { name: "hub", node_type: "ethernet_hub", compute_id: "local" });
    expect(node.status).toBe(201);
    const dir = path.join(s.dataDir, "projects", id);
    expect(fs.existsSync(dir)).toBe(true);

    const r = await call(s.url, "DELETE", `${C}/${id}`);
    expect(r.status).toBe(204);
    expect(fs.existsSync(dir)).toBe(false);
    expect(await s.ctx.db.node.count({ where: { projectId: id } })).toBe(0);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).status).toBe(404);
    expect((await call(s.url, "DELETE", `${C}/${id}`)).body).toEqual({ message: `Project ID ${id} doesn't exist`, status: 404 });
  });
});
