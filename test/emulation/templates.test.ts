import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { notificationSocket } from "../support/gns3-ws.js";

/** Reference: gns3-gui-compat.md §2 (Templates, Add a node), §5.1 (built-ins), §5.2 (routes). */
const VPCS_ID = "19021f99-e36f-394d-b4a1-8aaa902ab9cc";
const SWITCH_ID = "1966b864-93e7-32d5-965f-001384eec461";
const HUB_ID = "b4503ea9-d6b6-3695-9fe4-1db3b39290b0";
const CLOUD_ID = "39e257dc-8412-3174-b6b3-0ee3ed6a43e9";
const ALL_TYPES = ["cloud", "nat", "ethernet_hub", "ethernet_switch", "frame_relay_switch", "atm_switch", "docker", "dynamips", "vpcs", "traceng", "virtualbox", "vmware", "iou", "qemu"];

describe("emulation: templates (REST)", () => {
  let s: TestServer;
  let wsBase: string;
  beforeAll(async () => {
    s = await startTestServer();
    wsBase = s.url.replace(/^http/, "ws");
  });
  afterAll(() => s.close());

  it("lists GNS3's built-in templates with their fixed ids and fields, in GNS3's order", async () => {
    // A server of its own: the list holds the built-ins and nothing else, whatever templates other tests created.
    const fresh = await startTestServer();
    const r = await call(fresh.url, "GET", "/v2/templates").finally(() => fresh.close());
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.body.map((t: any) => [t.template_type, t.template_id])).toEqual([
      ["cloud", CLOUD_ID],
      ["nat", "df8f4ea9-33b7-3e96-86a2-c39bc9bb649c"],
      ["vpcs", VPCS_ID],
      ["ethernet_switch", SWITCH_ID],
      ["ethernet_hub", HUB_ID],
      ["frame_relay_switch", "dd0f6f3a-ba58-3249-81cb-a1dd88407a47"],
      ["atm_switch", "aaa764e2-b383-300f-8a0e-3493bbfdb7d2"],
    ]);
    const byType = Object.fromEntries(r.body.map((t: any) => [t.template_type, t]));
    expect(byType.vpcs).toEqual({
      builtin: true,
      category: "guest",
      compute_id: null,
      default_name_format: "PC{0}",
      name: "VPCS",
      properties: { base_script_file: "vpcs_base_config.txt" },
      symbol: ":/symbols/vpcs_guest.svg",
      template_id: VPCS_ID,
      template_type: "vpcs",
    });
    expect(byType.ethernet_switch).toMatchObject({ name: "Ethernet switch", default_name_format: "Switch{0}", category: "switch", console_type: "none", symbol: ":/symbols/ethernet_switch.svg" });
    expect(byType.ethernet_hub).toMatchObject({ name: "Ethernet hub", default_name_format: "Hub{0}", category: "switch", symbol: ":/symbols/hub.svg" });
    for (const t of r.body) expect(t).toMatchObject({ builtin: true, compute_id: null, template_id: expect.any(String), name: expect.any(String), category: expect.any(String), symbol: expect.any(String) });
  });

  it("every template symbol resolves to an SVG the way the GUI asks for it (id URL-quoted, / kept)", async () => {
    for (const t of (await call(s.url, "GET", "/v2/templates")).body) {
      const r = await call(s.url, "GET", `/v2/symbols/${encodeURIComponent(t.symbol).replaceAll("%2F", "/")}/raw`);
      expect([r.status, r.headers.get("content-type")], t.symbol).toEqual([200, "image/svg+xml"]);
    }
  });

  it("GET one answers with GNS3's ETag and 304 on If-None-Match; unknown → 404", async () => {
    const r = await call(s.url, "GET", `/v2/templates/${VPCS_ID}`);
    expect(r.status).toBe(200);
    const json = '{"builtin": true, "category": "guest", "compute_id": null, "default_name_format": "PC{0}", "name": "VPCS", "properties": {"base_script_file": "vpcs_base_config.txt"}, "symbol": ":/symbols/vpcs_guest.svg", "template_id": "19021f99-e36f-394d-b4a1-8aaa902ab9cc", "template_type": "vpcs"}';
    expect(r.headers.get("etag")).toBe(`"${createHash("md5").update(json).digest("hex")}"`);
    const again = await call(s.url, "GET", `/v2/templates/${VPCS_ID}`, undefined, { "If-None-Match": r.headers.get("etag")! });
    expect([again.status, again.text]).toEqual([304, ""]);
    const ghost = "0e0a2c3e-6d0a-4a43-9d36-1b7a0f2d7c11";
    expect(await call(s.url, "GET", `/v2/templates/${ghost}`)).toMatchObject({ status: 404, body: { message: `Template ID ${ghost} doesn't exist`, status: 404 } });
  });

  it("creates a user template with the type's defaults, keeps a client-chosen id, refuses a taken id and unknown keys", async () => {
    const r = await call(s.url, "POST", "/v2/templates", { name: "My PC", template_type: "vpcs", compute_id: "local" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      base_script_file: "vpcs_base_config.txt",
      builtin: false,
      category: "guest",
      compute_id: "local",
      console_auto_start: false,
      console_type: "telnet",
      default_name_format: "PC{0}",
      name: "My PC",
      symbol: ":/symbols/vpcs_guest.svg",
      template_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      template_type: "vpcs",
    });
    // The GUI's VPCS page body: client-generated id, legacy integer category.
    const id = "5b6f9d1e-7c53-4a53-9b55-0c8c7f0d1a01";
    const gui = { name: "GUI PC", default_name_format: "PC{0}", base_script_file: "vpcs_base_config.txt", console_type: "telnet", console_auto_start: false, symbol: ":/symbols/vpcs_guest.svg", category: 2, template_type: "vpcs", compute_id: "local", template_id: id };
    const created = await call(s.url, "POST", "/v2/templates", gui);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ template_id: id, category: "guest", builtin: false });
    expect((await call(s.url, "GET", `/v2/templates/${id}`)).body).toEqual(created.body);
    expect(await call(s.url, "POST", "/v2/templates", gui)).toMatchObject({ status: 409, body: { message: `Template ID '${id}' already exists` } });
    const extra = await call(s.url, "POST", "/v2/templates", { name: "x", template_type: "vpcs", compute_id: "local", ram: 256 });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain("Additional properties are not allowed ('ram' was unexpected)");
    expect((await call(s.url, "POST", "/v2/templates", { name: "x", template_type: "vpcs" })).body.message).toContain("'compute_id' is a required property");
    expect((await call(s.url, "POST", "/v2/templates", { name: "x", template_type: "toaster", compute_id: null })).status).toBe(400);
    const sw = await call(s.url, "POST", "/v2/templates", { name: "SW", template_type: "ethernet_switch", compute_id: null });
    expect(sw.body.console_type).toBe("none");
    expect(sw.body.ports_mapping).toHaveLength(8);
    expect(sw.body.ports_mapping[3]).toEqual({ ethertype: "", name: "Ethernet3", port_number: 3, type: "access", vlan: 1 });
  });

  it("keeps user templates of every node type", async () => {
    for (const type of ALL_TYPES) {
      const r = await call(s.url, "POST", "/v2/templates", {
        name: `t-${type}`, template_type: type, compute_id: "local",
        ...(type === "qemu" && { ram: 512, hda_disk_image: "linux.qcow2" }),
        ...(type === "docker" && { image: "busybox:latest" }),
      });
      expect(r.status, `${type}: ${r.text}`).toBe(201);
      expect(r.body).toMatchObject({ template_type: type, builtin: false, category: expect.any(String), default_name_format: expect.any(String), symbol: expect.any(String) });
    }
    const list = (await call(s.url, "GET", "/v2/templates")).body.map((t: any) => t.name);
    for (const type of ALL_TYPES) expect(list).toContain(`t-${type}`);
    const qemu = (await call(s.url, "GET", "/v2/templates")).body.find((t: any) => t.name === "t-qemu");
    expect(qemu).toMatchObject({ ram: 512, hda_disk_image: "linux.qcow2", default_name_format: "{name}-{0}" });
  });

  it("update, duplicate and delete, each announced on the controller stream with the full template", async () => {
    const ws = await notificationSocket(`${wsBase}/v2/notifications/ws`);
    const t = (await call(s.url, "POST", "/v2/templates", { name: "Evented", template_type: "vpcs", compute_id: "local" })).body;
    expect(await ws.next("template.created")).toEqual({ action: "template.created", event: t });

    // The GUI PUTs the full object, fixed keys included: those are ignored.
    const put = await call(s.url, "PUT", `/v2/templates/${t.template_id}`, { ...t, name: "Renamed", console_type: "none", template_type: "qemu", builtin: true, compute_id: "elsewhere" });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...t, name: "Renamed", console_type: "none" });
    expect(await ws.next("template.updated")).toEqual({ action: "template.updated", event: put.body });
    expect((await call(s.url, "PUT", `/v2/templates/${t.template_id}`, { name: "" })).status).toBe(400);
    expect((await call(s.url, "PUT", `/v2/templates/${t.template_id}`, { unknown_key: 1 })).status).toBe(400);
    expect((await call(s.url, "PUT", `/v2/templates/${VPCS_ID}`, { name: "Mine" })).status).toBe(409);

    const dup = await call(s.url, "POST", `/v2/templates/${t.template_id}/duplicate`, { ignored: true });
    expect(dup.status).toBe(201);
    expect(dup.body).toEqual({ ...put.body, template_id: expect.not.stringMatching(t.template_id) });
    expect((await ws.next("template.created")).event).toEqual(dup.body);
    expect(await call(s.url, "POST", `/v2/templates/${VPCS_ID}/duplicate`)).toMatchObject({ status: 409, body: { message: `Template ID ${VPCS_ID} cannot be duplicated because it is a builtin` } });

    expect((await call(s.url, "DELETE", `/v2/templates/${t.template_id}`)).status).toBe(204);
    expect(await ws.next("template.deleted")).toEqual({ action: "template.deleted", event: put.body });
    expect((await call(s.url, "GET", `/v2/templates/${t.template_id}`)).status).toBe(404);
    expect(await call(s.url, "DELETE", `/v2/templates/${HUB_ID}`)).toMatchObject({ status: 409, body: { message: `Template ID ${HUB_ID} cannot be deleted because it is a builtin` } });
    ws.close();
  });

  it("user templates are stored in the database: another server on it lists them", async () => {
    const t = (await call(s.url, "POST", "/v2/templates", { name: "Persistent", template_type: "ethernet_hub", compute_id: null })).body;
    const other = await startTestServer({}, { databaseUrl: s.databaseUrl });
    try {
      expect((await call(other.url, "GET", `/v2/templates/${t.template_id}`)).body).toEqual(t);
    } finally {
      await other.close();
    }
  });

  describe("nodes from templates", () => {
    let pid: string;
    let P: string;
    beforeAll(async () => {
      pid = (await call(s.url, "POST", "/v2/projects", { name: "from-templates" })).body.project_id;
      P = `/v2/projects/${pid}`;
    });

    it("names PC1, PC2 … from PC{0}, gives the template's settings, and the node appears through node.created", async () => {
      const ws = await notificationSocket(`${wsBase}${P}/notifications/ws`);
      const r = await call(s.url, "POST", `${P}/templates/${VPCS_ID}`, { x: -60, y: 50, compute_id: "local" });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        name: "PC1",
        node_type: "vpcs",
        compute_id: "local",
        template_id: VPCS_ID,
        symbol: ":/symbols/vpcs_guest.svg",
        console_type: "telnet",
        console: expect.any(Number),
        status: "stopped",
        properties: {},
        x: -60,
        y: 50,
        label: { text: "PC1", rotation: 0, style: null, x: null, y: expect.any(Number) },
        ports: [{ adapter_number: 0, port_number: 0, name: "Ethernet0", short_name: "e0", link_type: "ethernet", data_link_types: { Ethernet: "DLT_EN10MB" } }],
      });
      expect(await ws.next("node.created")).toEqual({ action: "node.created", event: r.body });
      const second = await call(s.url, "POST", `${P}/templates/${VPCS_ID}`, { x: 0, y: 0, compute_id: "local" });
      expect(second.body.name).toBe("PC2");
      ws.close();
    });

    it("switch and hub built-ins: Switch1 with 8 access ports and console type none, Hub1 with 8 ports, both started", async () => {
      const sw = (await call(s.url, "POST", `${P}/templates/${SWITCH_ID}`, { x: 0, y: 0, compute_id: "local" })).body;
      expect(sw).toMatchObject({ name: "Switch1", node_type: "ethernet_switch", status: "started", console_type: "none", console: expect.any(Number) });
      expect(sw.properties.ports_mapping).toHaveLength(8);
      expect(sw.properties.ports_mapping[0]).toMatchObject({ name: "Ethernet0", port_number: 0, type: "access", vlan: 1 });
      expect(sw.ports).toHaveLength(8);
      const hub = (await call(s.url, "POST", `${P}/templates/${HUB_ID}`, { x: 0, y: 0, compute_id: "local" })).body;
      expect(hub).toMatchObject({ name: "Hub1", node_type: "ethernet_hub", status: "started", console: null, console_type: null });
      expect(hub.ports).toHaveLength(8);
    });

    it("a user template: its compute wins, {name} takes the template name, its settings apply", async () => {
      const t = (
        await call(s.url, "POST", "/v2/templates", {
          name: "Core Switch",
          template_type: "ethernet_switch",
          compute_id: "local",
          default_name_format: "{name}-{0}",
          ports_mapping: [{ name: "Uplink", port_number: 0, type: "dot1q", vlan: 1, ethertype: "0x8100" }, { name: "Access", port_number: 1, type: "access", vlan: 10 }],
        })
      ).body;
      const r = await call(s.url, "POST", `${P}/templates/${t.template_id}`, { x: 1, y: 2, compute_id: "somewhere-else" });
      expect(r.status, r.text).toBe(201);
      expect(r.body).toMatchObject({ name: "CoreSwitch-1", compute_id: "local", template_id: t.template_id });
      expect(r.body.ports.map((p: any) => p.name)).toEqual(["Uplink", "Access"]);
      const named = await call(s.url, "POST", `${P}/templates/${t.template_id}`, { x: 1, y: 2, name: "Edge" });
      expect(named.body.name).toBe("Edge");
    });

    it("clear errors: unknown template, no compute for a built-in, a type this server cannot run, bad body, closed project", async () => {
      const FRSW_ID = "dd0f6f3a-ba58-3249-81cb-a1dd88407a47";
      const ghost = "0e0a2c3e-6d0a-4a43-9d36-1b7a0f2d7c11";
      expect(await call(s.url, "POST", `${P}/templates/${ghost}`, { x: 0, y: 0, compute_id: "local" })).toMatchObject({ status: 404, body: { message: `Template ${ghost} doesn't exist` } });
      expect(await call(s.url, "POST", `${P}/templates/${VPCS_ID}`, { x: 0, y: 0 })).toMatchObject({ status: 404, body: { message: "Compute ID None doesn't exist" } });
      const frsw = await call(s.url, "POST", `${P}/templates/${FRSW_ID}`, { x: 0, y: 0, compute_id: "local" });
      expect(frsw.status).toBe(409);
      expect(frsw.body.message).toMatch(/cannot run frame_relay_switch nodes.*vpcs, ethernet_hub, ethernet_switch/);
      const z = await call(s.url, "POST", `${P}/templates/${VPCS_ID}`, { x: 0, y: 0, z: 1, compute_id: "local" });
      expect(z.status).toBe(400);
      expect(z.body.message).toContain("Additional properties are not allowed ('z' was unexpected)");
      expect((await call(s.url, "POST", `${P}/templates/${VPCS_ID}`, { x: "1", y: 0, compute_id: "local" })).body.message).toMatch(/'1' is not of type/);
      const closed = (await call(s.url, "POST", "/v2/projects", { name: "closed-one" })).body.project_id;
      await call(s.url, "POST", `/v2/projects/${closed}/close`);
      expect(await call(s.url, "POST", `/v2/projects/${closed}/templates/${VPCS_ID}`, { x: 0, y: 0, compute_id: "local" })).toMatchObject({ status: 403, body: { message: "The project is not opened" } });
    });
  });

  it("appliances: an honest empty list (this server runs no qemu, iou, dynamips or docker images)", async () => {
    const r = await call(s.url, "GET", "/v2/appliances?symbol_theme=Classic");
    expect([r.status, r.headers.get("content-type"), r.body]).toEqual([200, "application/json", []]);
  });
});
