import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, portWindow, startTestServer, type TestServer } from "../support/server.js";
import { notificationSocket } from "../support/gns3-ws.js";

/** What the GNS3 GUI needs besides templates and drawings (gui-compat §2, §5.4, §8). */
describe("emulation: node duplicate, console reset, compute ports, symbol keys", () => {
  let s: TestServer;
  const ports = portWindow(); // configured explicitly: the ports route must report them
  let pid: string;
  let P: string;
  beforeAll(async () => {
    s = await startTestServer(ports);
    pid = (await call(s.url, "POST", "/v2/projects", { name: "extras" })).body.project_id;
    P = `/v2/projects/${pid}`;
  });
  afterAll(() => s.close());

  it("duplicates a node: same settings and properties, the next free name, its own console, unlocked, files copied", async () => {
    const pc = (
      await call(s.url, "POST", `${P}/nodes`, {
        name: "PC1",
        node_type: "vpcs",
        compute_id: "local",
        console_auto_start: true,
        locked: true,
        symbol: ":/symbols/computer.svg",
        label: { text: "PC1", x: 5, y: -30, rotation: 0, style: "font-size: 10" },
      })
    ).body;
    expect((await call(s.url, "POST", `${P}/nodes/${pc.node_id}/files/startup.vpc`, "ip 10.0.0.1/24\n")).status).toBe(201);
    const ws = await notificationSocket(`${s.url.replace(/^http/, "ws")}${P}/notifications/ws`);
    const r = await call(s.url, "POST", `${P}/nodes/${pc.node_id}/duplicate`, { x: 100, y: 50, z: 3 });
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json");
    const copy = r.body;
    expect(copy).toMatchObject({
      name: "PC2",
      node_type: "vpcs",
      console_type: "telnet",
      console_auto_start: true,
      locked: false,
      symbol: ":/symbols/computer.svg",
      x: 100,
      y: 50,
      z: 3,
      status: "stopped",
      label: { text: "PC2", x: 5, y: -30, style: "font-size: 10" },
    });
    expect(copy.node_id).not.toBe(pc.node_id);
    expect(copy.console).toEqual(expect.any(Number));
    expect(copy.console).not.toBe(pc.console);
    expect(await ws.next("node.created")).toEqual({ action: "node.created", event: copy });
    ws.close();
    const file = await call(s.url, "GET", `${P}/nodes/${copy.node_id}/files/startup.vpc`);
    expect([file.status, file.text]).toEqual([200, "ip 10.0.0.1/24\n"]);

    const sw = (await call(s.url, "POST", `${P}/nodes`, { name: "SW1", node_type: "ethernet_switch", compute_id: "local", properties: { ports_mapping: [{ name: "Up", port_number: 0, type: "dot1q", vlan: 1 }] } })).body;
    const swCopy = (await call(s.url, "POST", `${P}/nodes/${sw.node_id}/duplicate`, { x: 0, y: 0 })).body;
    expect(swCopy).toMatchObject({ name: "SW2", status: "started", z: sw.z, properties: { ports_mapping: [{ name: "Up", port_number: 0, type: "dot1q", vlan: 1 }] } });

    expect((await call(s.url, "POST", `${P}/nodes/${pc.node_id}/duplicate`, { x: 0 })).status).toBe(400);
    expect((await call(s.url, "POST", `${P}/nodes/6a1d3f0e-9a8b-4c1d-8e2f-000000000000/duplicate`, { x: 0, y: 0 })).status).toBe(404);
  });

  it("resets the consoles of an opened project or of one node (204), 404 for unknown ones, 403 when closed", async () => {
    const r = await call(s.url, "POST", `${P}/nodes/console/reset`);
    expect([r.status, r.text]).toEqual([204, ""]);
    expect((await call(s.url, "POST", "/v2/projects/6a1d3f0e-9a8b-4c1d-8e2f-000000000000/nodes/console/reset")).status).toBe(404);
    const pc = (await call(s.url, "POST", `${P}/nodes`, { name: "Reset1", node_type: "vpcs", compute_id: "local" })).body;
    expect((await call(s.url, "POST", `${P}/nodes/${pc.node_id}/console/reset`)).status).toBe(204);
    expect((await call(s.url, "POST", `${P}/nodes/6a1d3f0e-9a8b-4c1d-8e2f-000000000000/console/reset`)).status).toBe(404);
    const closed = (await call(s.url, "POST", "/v2/projects", { name: "closed-extras" })).body.project_id;
    await call(s.url, "POST", `/v2/projects/${closed}/close`);
    expect((await call(s.url, "POST", `/v2/projects/${closed}/nodes/console/reset`)).status).toBe(403);
  });

  it("compute ports: GNS3's shape, the configured ranges and the console ports in use; unknown compute → 404", async () => {
    const r = await call(s.url, "GET", "/v2/computes/local/ports");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(Object.keys(r.body).sort()).toEqual(["console_port_range", "console_ports", "udp_port_range", "udp_ports"]);
    expect(r.body.console_port_range).toEqual(ports.consolePorts);
    expect(r.body.udp_port_range).toEqual(ports.udpPorts);
    const consoles = (await call(s.url, "GET", `${P}/nodes`)).body.map((n: any) => n.console).filter((c: number | null) => c !== null);
    expect(r.body.console_ports).toEqual([...consoles].sort((a, b) => a - b));
    expect(r.body.udp_ports).toEqual(expect.any(Array));
    expect((await call(s.url, "GET", "/v2/computes/nope/ports")).status).toBe(404);
    expect((await call(s.url, "GET", "/v2/compute/network/ports")).body).toEqual(r.body);
  });

  it("symbols carry exactly the keys the GUI's Symbol constructor takes", async () => {
    const r = await call(s.url, "GET", "/v2/symbols");
    expect(r.body.length).toBeGreaterThan(0);
    for (const symbol of r.body) expect(Object.keys(symbol).sort()).toEqual(["builtin", "filename", "symbol_id", "theme"]);
  });
});
