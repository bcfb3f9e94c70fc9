import fs from "node:fs";
import path from "node:path";
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { makeProject } from "./nodes-support.js";

const vpcs = (name = "PC1", extra: object = {}) => ({ name, node_type: "vpcs", compute_id: "local", ...extra });

/** GET with the path sent as-is (fetch would normalise `..`). */
function rawGet(base: string, rawPath: string): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    http
      .get({ host: u.hostname, port: u.port, path: rawPath }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

describe("emulation: nodes (REST)", () => {
  let s: TestServer;
  let pid: string;
  let P: string;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());
  // Each test gets its own project, so node names and console ports it sees are only its own.
  beforeEach(async () => {
    pid = await makeProject(s);
    P = `/v2/projects/${pid}`;
  });
  /** Creates vpcs nodes with exactly these names in the test's project. */
  const pcs = async (...names: string[]) => {
    for (const name of names) {
      const r = await call(s.url, "POST", `${P}/nodes`, vpcs(name));
      expect([r.status, r.body.name]).toEqual([201, name]);
    }
  };

  it("creates a vpcs node with the reference defaults", async () => {
    const r = await call(s.url, "POST", `${P}/nodes`, vpcs("PC1", { x: -100, y: 0 }));
    expect(r.status).toBe(201);
    expect(r.headers.get("x-route")).toBe("/v2/projects/{project_id}/nodes");
    const n = r.body;
    expect(Object.keys(n)).toEqual([...Object.keys(n)].sort());
    expect(n).toMatchObject({
      command_line: "",
      compute_id: "local",
      console_auto_start: false,
      console_host: s.ctx.config.host,
      console_type: "telnet",
      custom_adapters: [],
      first_port_name: null,
      height: 59,
      width: 65,
      label: { rotation: 0, style: null, text: "PC1", x: null, y: -40 },
      locked: false,
      name: "PC1",
      node_directory: path.join(s.dataDir, "projects", pid, "project-files", "vpcs", n.node_id),
      node_type: "vpcs",
      port_name_format: "Ethernet{0}",
      port_segment_size: 0,
      ports: [{ adapter_number: 0, data_link_types: { Ethernet: "DLT_EN10MB" }, link_type: "ethernet", name: "Ethernet0", port_number: 0, short_name: "e0" }],
      project_id: pid,
      properties: {},
      status: "stopped",
      symbol: ":/symbols/computer.svg",
      template_id: null,
      x: -100,
      y: 0,
      z: 1,
    });
    expect(fs.statSync(n.node_directory).isDirectory()).toBe(true);
    const [lo, hi] = s.ctx.config.consolePorts;
    expect(n.console).toBeGreaterThanOrEqual(lo);
    expect(n.console).toBeLessThanOrEqual(hi);
  });

  it("renames clashing names, strips spaces and fills templates", async () => {
    await pcs("PC1");
    expect((await call(s.url, "POST", `${P}/nodes`, vpcs("PC1"))).body.name).toBe("PC2");
    expect((await call(s.url, "POST", `${P}/nodes`, vpcs("PC y"))).body.name).toBe("PCy");
    expect((await call(s.url, "POST", `${P}/nodes`, vpcs("PCy"))).body.name).toBe("PCy1");
    expect((await call(s.url, "POST", `${P}/nodes`, vpcs("R{0}"))).body.name).toBe("R1");
    expect((await call(s.url, "POST", `${P}/nodes`, vpcs("R{id}"))).body.name).toBe("R2");
    const bad = await call(s.url, "POST", `${P}/nodes`, vpcs("X{0}{oops}"));
    expect(bad.status).toBe(409);
    expect(bad.body.message).toBe("{oops} is not a valid replacement string in the node name");
  });

  it("allocates distinct console ports and refuses a taken one", async () => {
    await pcs("PC1", "PC2", "PCy");
    const { body: list } = await call(s.url, "GET", `${P}/nodes`);
    const consoles = list.map((n: any) => n.console);
    expect(new Set(consoles).size).toBe(consoles.length);
    const clash = await call(s.url, "POST", `${P}/nodes`, vpcs("C", { console: consoles[0] }));
    expect(clash.status).toBe(409);
    const own = await call(s.url, "POST", `${P}/nodes`, vpcs("C", { console: 40000 }));
    expect(own.body.console).toBe(40000);
    await call(s.url, "DELETE", `${P}/nodes/${own.body.node_id}`);
  });

  it("allocates console ports race-free under concurrent creation", async () => {
    const made = await Promise.all(Array.from({ length: 6 }, () => call(s.url, "POST", `${P}/nodes`, vpcs("Race1"))));
    expect(made.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(new Set(made.map((r) => r.body.console)).size).toBe(6);
    expect(new Set(made.map((r) => r.body.name)).size).toBe(6);
    for (const r of made) await call(s.url, "DELETE", `${P}/nodes/${r.body.node_id}`);
  });

  it("creates an ethernet switch (started, console type none but a console port, 8 access ports)", async () => {
    const r = await call(s.url, "POST", `${P}/nodes`, { name: "SW1", node_type: "ethernet_switch", compute_id: "local" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: "started", console_type: "none", command_line: null, node_directory: null });
    expect(typeof r.body.console).toBe("number");
    expect(r.body.properties.ports_mapping).toHaveLength(8);
    expect(r.body.properties.ports_mapping[3]).toEqual({ name: "Ethernet3", port_number: 3, type: "access", vlan: 1 });
    expect(r.body.ports.map((p: any) => [p.name, p.short_name, p.adapter_number, p.port_number])[7]).toEqual(["Ethernet7", "e7", 0, 7]);
  });

  it("creates an ethernet hub (started, no console) and honours a custom ports_mapping", async () => {
    const r = await call(s.url, "POST", `${P}/nodes`, { name: "HUB1", node_type: "ethernet_hub", compute_id: "local" });
    expect(r.body).toMatchObject({ status: "started", console: null, console_type: null });
    expect(r.body.properties.ports_mapping[0]).toEqual({ name: "Ethernet0", port_number: 0 });
    const small = await call(s.url, "POST", `${P}/nodes`, {
      name: "HUB2",
      node_type: "ethernet_hub",
      compute_id: "local",
      properties: { ports_mapping: [{ name: "Uplink", port_number: 0 }, { name: "Down", port_number: 1 }] },
    });
    expect(small.body.ports.map((p: any) => p.name)).toEqual(["Uplink", "Down"]);
  });

  it("rejects bad bodies with the GNS3 400 shape", async () => {
    const bad = await call(s.url, "POST", `${P}/nodes`, { name: "X", node_type: "toaster", compute_id: "local" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, method: "POST", path: "/v2/projects/{project_id}/nodes" });
    expect(bad.body.message).toContain("'toaster' is not one of ['cloud', 'nat', 'ethernet_hub'");
    const missing = await call(s.url, "POST", `${P}/nodes`, { name: "X", node_type: "vpcs" });
    expect(missing.body.message).toMatch(/'compute_id' is a required property$/);
    const extra = await call(s.url, "POST", `${P}/nodes`, vpcs("X", { colour: "red" }));
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain("Additional properties are not allowed ('colour' was unexpected)");
    const type = await call(s.url, "POST", `${P}/nodes`, vpcs("X", { x: "left" }));
    expect(type.body.message).toMatch(/'left' is not of type '(integer|number)'$/);
    const vnc = await call(s.url, "POST", `${P}/nodes`, vpcs("X", { console_type: "vnc" }));
    expect(vnc.status).toBe(400);
  });

  it("answers 404 for an unknown compute, project or node", async () => {
    const compute = await call(s.url, "POST", `${P}/nodes`, { name: "X", node_type: "vpcs", compute_id: "nope" });
    expect(compute).toMatchObject({ status: 404, body: { message: "Compute ID nope doesn't exist", status: 404 } });
    const other = "e01323a4-2775-4b53-8cc8-84e3dba6f74f";
    const project = await call(s.url, "POST", `/v2/projects/${other}/nodes`, vpcs());
    expect(project.body).toEqual({ message: `Project ID ${other} doesn't exist`, status: 404 });
    const missing = { message: `Node ID ${other} doesn't exist`, status: 404 };
    expect((await call(s.url, "GET", `${P}/nodes/${other}`)).body).toEqual(missing);
    expect((await call(s.url, "PUT", `${P}/nodes/${other}`, { x: 1 })).body).toEqual(missing);
    expect((await call(s.url, "DELETE", `${P}/nodes/${other}`)).body).toEqual(missing);
    expect((await call(s.url, "GET", `${P}/nodes/${other}/files/a.txt`)).body).toEqual(missing);
    expect((await call(s.url, "POST", `${P}/nodes/${other}/files/a.txt`, "x")).body).toEqual(missing);
    expect((await call(s.url, "GET", `/v2/projects/${other}/nodes`)).status).toBe(404);
  });

  it("accepts a compute registered in the Compute table", async () => {
    await s.ctx.db.compute.create({ data: { id: "remote1", name: "Remote", protocol: "http", host: "10.0.0.1", port: 3080 } });
    const r = await call(s.url, "POST", `${P}/nodes`, vpcs("Remote", { compute_id: "remote1" }));
    expect(r.status).toBe(201);
    expect(r.body.compute_id).toBe("remote1");
    expect(r.body.console).toBe(s.ctx.config.consolePorts[0]); // console ports are unique per compute
  });

  it("GET lists and GET one returns the node", async () => {
    await pcs("PC1", "PC2");
    const { body: list, status } = await call(s.url, "GET", `${P}/nodes`);
    expect(status).toBe(200);
    expect(list[0].name).toBe("PC1");
    const one = await call(s.url, "GET", `${P}/nodes/${list[0].node_id}`);
    expect(one.body).toEqual(list[0]);
  });

  it("PUT updates controller fields, forces the label text, renames by the naming rule", async () => {
    await pcs("PC1", "PC2");
    const { body: list } = await call(s.url, "GET", `${P}/nodes`);
    const pc1 = list.find((n: any) => n.name === "PC1");
    const r = await call(s.url, "PUT", `${P}/nodes/${pc1.node_id}`, {
      x: 10,
      y: 20,
      z: 2,
      label: { text: "ignored", x: 5, y: -25, rotation: 0, style: null },
      node_id: "2916eeab-7446-41bd-b94d-0fb6aaa47813",
      node_type: "vpcs",
      compute_id: "local",
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ x: 10, y: 20, z: 2, node_id: pc1.node_id, label: { text: "PC1", x: 5, y: -25 } });
    const renamed = await call(s.url, "PUT", `${P}/nodes/${pc1.node_id}`, { name: "PC2" });
    expect(renamed.body.name).toBe("PC3");
    expect(renamed.body.label.text).toBe("PC3");
    const same = await call(s.url, "PUT", `${P}/nodes/${pc1.node_id}`, { name: "PC3" });
    expect(same.body.name).toBe("PC3");
    const props = await call(s.url, "PUT", `${P}/nodes/${pc1.node_id}`, { properties: { startup_script: "ip 10.0.0.1" } });
    expect(props.body.properties).toEqual({ startup_script: "ip 10.0.0.1" });
    const badStatus = await call(s.url, "PUT", `${P}/nodes/${pc1.node_id}`, { status: "running" });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.message).toMatch(/'running' is not one of \['stopped', 'started', 'suspended'\]$/);
    const unknown = await call(s.url, "PUT", `${P}/nodes/${pc1.node_id}`, { speed: 1 });
    expect(unknown.status).toBe(400);
  });

  it("refuses to delete a locked node, deletes an unlocked one", async () => {
    const n = (await call(s.url, "POST", `${P}/nodes`, vpcs("Locked", { locked: true }))).body;
    const r = await call(s.url, "DELETE", `${P}/nodes/${n.node_id}`);
    expect(r).toMatchObject({ status: 409, body: { message: "Node Locked cannot be deleted because it is locked", status: 409 } });
    await call(s.url, "PUT", `${P}/nodes/${n.node_id}`, { locked: false });
    const ok = await call(s.url, "DELETE", `${P}/nodes/${n.node_id}`);
    expect(ok.status).toBe(204);
    expect(ok.text).toBe("");
    expect((await call(s.url, "GET", `${P}/nodes/${n.node_id}`)).status).toBe(404);
  });

  it("node files: upload creates directories (201), download returns the bytes, traversal is 403", async () => {
    const n = (await call(s.url, "POST", `${P}/nodes`, vpcs("Files"))).body;
    const base = `${P}/nodes/${n.node_id}/files`;
    const up = await fetch(`${s.url}${base}/conf/startup.vpc`, { method: "POST", body: "ip 10.0.0.2/24\n" });
    expect(up.status).toBe(201);
    expect(fs.readFileSync(path.join(n.node_directory, "conf", "startup.vpc"), "utf8")).toBe("ip 10.0.0.2/24\n");
    const down = await fetch(`${s.url}${base}/conf/startup.vpc`);
    expect(down.status).toBe(200);
    expect(down.headers.get("content-type")).toBe("application/octet-stream");
    expect(await down.text()).toBe("ip 10.0.0.2/24\n");
    const missing = await call(s.url, "GET", `${base}/nothing.txt`);
    expect(missing.status).toBe(404);
    for (const p of [".hidden", "a/../../../../etc/passwd", "..%2F..%2F..%2Fetc%2Fpasswd", "%2E%2E/%2E%2E/etc/passwd"]) {
      const r = await rawGet(s.url, `${base}/${p}`);
      expect(r.status, p).toBe(403);
      expect(JSON.parse(r.body)).toEqual({ message: "403: Forbidden", status: 403 });
    }
    // A symlink inside the node directory pointing outside is refused too.
    fs.symlinkSync("/etc", path.join(n.node_directory, "escape"));
    expect((await rawGet(s.url, `${base}/escape/passwd`)).status).toBe(403);
  });

  it("a closed project: list gives topology entries, item routes and writes are 403", async () => {
    const closed = await makeProject(s);
    const n = (await call(s.url, "POST", `/v2/projects/${closed}/nodes`, vpcs("T1"))).body;
    await s.ctx.db.project.update({ where: { id: closed }, data: { status: "closed" } });
    const { body: list } = await call(s.url, "GET", `/v2/projects/${closed}/nodes`);
    expect(list).toHaveLength(1);
    for (const k of ["project_id", "status", "ports", "console_host", "command_line", "node_directory"]) expect(list[0]).not.toHaveProperty(k);
    expect(list[0]).toMatchObject({ name: "T1", node_id: n.node_id, console: n.console, properties: {} });
    const forbidden = { message: "The project is not opened", status: 403 };
    expect((await call(s.url, "GET", `/v2/projects/${closed}/nodes/${n.node_id}`)).body).toEqual(forbidden);
    expect((await call(s.url, "PUT", `/v2/projects/${closed}/nodes/${n.node_id}`, { x: 1 })).body).toEqual(forbidden);
    expect((await call(s.url, "DELETE", `/v2/projects/${closed}/nodes/${n.node_id}`)).body).toEqual(forbidden);
    expect((await call(s.url, "POST", `/v2/projects/${closed}/nodes`, vpcs())).body).toEqual(forbidden);
    expect((await call(s.url, "GET", `/v2/projects/${closed}/nodes/${n.node_id}/links`)).body).toEqual(forbidden);
    expect((await call(s.url, "GET", `/v2/projects/${closed}/nodes/${n.node_id}/files/x`)).body).toEqual(forbidden);
  });

  it("skips console ports that something else on the host listens on", async () => {
    const squatter = net.createServer();
    await new Promise<void>((r) => squatter.listen(0, "127.0.0.1", r));
    const taken = (squatter.address() as net.AddressInfo).port;
    const other = await startTestServer({ consolePorts: [taken, taken + 20] });
    try {
      const p = await makeProject(other);
      const r = await call(other.url, "POST", `/v2/projects/${p}/nodes`, vpcs());
      expect(r.status).toBe(201);
      expect(r.body.console).toBeGreaterThan(taken);
    } finally {
      await other.close();
      squatter.close();
    }
  });

  it("answers 405 for a wrong method", async () => {
    const r = await call(s.url, "PATCH", `${P}/nodes`);
    expect(r.status).toBe(405);
  });
});
