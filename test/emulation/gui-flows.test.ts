import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { notificationSocket } from "../support/gns3-ws.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { step } from "../support/steps.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";
import { GUI_SVG } from "./drawings-support.js";
import { hostNodesLab, hostNodesReady, projectContainers, testDockerImage, type HostNodesLab } from "./host-nodes-support.js";

/**
 * The GNS3 desktop GUI 2.2.59, replayed as one session (one test: each flow works on what the earlier flows
 * built, as in the GUI): each flow of ../shared/reference/gns3-gui-compat.md §2 with the
 * GUI's own request bodies, in its order, checking what the GUI checks — the status, `Content-Type` compared
 * by string equality with `application/json` (anything else and the GUI discards the body), the fields it
 * reads (§3) and the WebSocket events it waits for (§4).
 */

const GUI_HEADERS = { "User-Agent": "GNS3 QT Client v2.2.59" };

/** A WebSocket opened as the GUI opens it; `next` gives the event the GUI acts on. */
async function guiSocket(url: string) {
  const socket = await notificationSocket(url, GUI_HEADERS);
  return { ...socket, next: async (action: string, match?: (event: any) => boolean, ms?: number) => (await socket.next(action, match, ms)).event };
}

const PROJECT_KEYS = ["project_id", "name", "filename", "path", "auto_start", "auto_open", "auto_close", "scene_width", "scene_height", "zoom",
  "show_layers", "snap_to_grid", "show_grid", "grid_size", "drawing_grid_size", "show_interface_labels", "variables", "supplier", "status"];
const COMPUTE_KEYS = ["compute_id", "name", "connected", "protocol", "host", "port", "user", "cpu_usage_percent", "memory_usage_percent", "capabilities"];
const NODE_KEYS = ["node_id", "node_type", "compute_id", "symbol", "x", "y", "z", "name", "status", "locked", "label", "console", "console_host",
  "console_type", "console_auto_start", "custom_adapters", "first_port_name", "port_name_format", "port_segment_size", "properties", "ports"];
const PORT_KEYS = ["adapter_number", "port_number", "name", "short_name", "link_type", "data_link_types"];
const LINK_KEYS = ["link_id", "nodes", "filters", "link_style", "suspend", "capturing", "capture_compute_id", "capture_file_path"];
const TEMPLATE_KEYS = ["template_id", "name", "category", "template_type", "builtin", "symbol", "compute_id"];
/** GNS3's built-in template ids (uuid3 of the type), the same on every 2.2 server. */
const BUILTIN = {
  vpcs: "19021f99-e36f-394d-b4a1-8aaa902ab9cc",
  ethernet_switch: "1966b864-93e7-32d5-965f-001384eec461",
  ethernet_hub: "b4503ea9-d6b6-3695-9fe4-1db3b39290b0",
};
const DRAWING_KEYS = ["drawing_id", "x", "y", "z", "locked", "rotation", "svg"];

const hasKeys = (o: object, keys: string[]) => expect(Object.keys(o)).toEqual(expect.arrayContaining(keys));

function expectNode(n: any) {
  hasKeys(n, NODE_KEYS);
  for (const p of n.ports) hasKeys(p, PORT_KEYS);
  expect(["started", "stopped", "suspended"]).toContain(n.status);
}
function expectLink(l: any) {
  hasKeys(l, LINK_KEYS);
  for (const end of l.nodes) expect(typeof end.label).toBe("object"); // the GUI dereferences every end's label
}

describe("GNS3 GUI 2.2.59 flows replayed against Patchbay", () => {
  let s: TestServer;
  let controller: Awaited<ReturnType<typeof guiSocket>>;
  let stream: Awaited<ReturnType<typeof guiSocket>>;
  let P: string;
  let projectId: string;
  const nodes: Record<string, any> = {};
  let link: any;
  let templates: any[];
  let computeTypes: Record<string, string[]>;

  /** One request as the GUI sends it; a body in the answer must be typed exactly application/json. */
  async function gui(method: string, url: string, body: unknown, status: number) {
    const r = await call(s.url, method, `/v2${url}`, body, GUI_HEADERS);
    expect(r.status, `${method} ${url} → ${r.text}`).toBe(status);
    if (r.text) expect(r.headers.get("content-type"), `${method} ${url}`).toBe("application/json");
    return r.body;
  }
  /** Flows that end in an error pop-up: the GUI shows `message` and reads `status`. */
  async function guiError(method: string, url: string, body: unknown, status: number) {
    const e = await gui(method, url, body, status);
    expect(e).toMatchObject({ message: expect.any(String), status });
    return e.message as string;
  }

  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    controller?.close();
    stream?.close();
    await s?.close();
  });

  it("one GUI session: connect, projects, templates, nodes, links, consoles, node actions, capture, drawings, snapshots, export/import, duplicate and delete", async () => {
    await step("connect: version gate, project list, controller WebSocket, computes, symbols", async () => {
      const version = await gui("GET", "/version", undefined, 200);
      expect(version).toEqual({ version: "2.2.59", local: expect.any(Boolean) });
      expect(Array.isArray(await gui("GET", "/projects", undefined, 200))).toBe(true);
      controller = await guiSocket(`${s.url.replace(/^http/, "ws")}/v2/notifications/ws`);
      expect(await controller.next("ping")).toEqual({ cpu_usage_percent: expect.any(Number), memory_usage_percent: expect.any(Number) });
      const computes = await gui("GET", "/computes", undefined, 200);
      const local = computes.find((c: any) => c.compute_id === "local");
      hasKeys(local, COMPUTE_KEYS);
      expect(local.capabilities.node_types).toEqual(expect.arrayContaining(["vpcs", "ethernet_switch", "ethernet_hub"]));
      computeTypes = Object.fromEntries(computes.map((c: any) => [c.compute_id, c.capabilities.node_types]));
      templates = await gui("GET", "/templates", undefined, 200);
      for (const t of templates) hasKeys(t, TEMPLATE_KEYS);
      expect(templates.filter((t: any) => t.builtin).map((t: any) => t.template_id)).toEqual(expect.arrayContaining(Object.values(BUILTIN)));
      expect(Array.isArray(await gui("GET", "/appliances?symbol_theme=Classic", undefined, 200))).toBe(true);
      // The device list icons: one per template symbol, the id URL-quoted with "/" kept; never served as JSON.
      for (const symbol of new Set(templates.map((t: any) => t.symbol as string))) {
        const icon = await fetch(`${s.url}/v2/symbols/${encodeURIComponent(symbol).replaceAll("%2F", "/")}/raw`, { headers: GUI_HEADERS });
        expect(icon.status, symbol).toBe(200);
        expect(icon.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
      }
    });

    await step("projects: new, project WebSocket, edit, close and reopen (nodes → links → drawings)", async () => {
      const created = await gui("POST", "/projects", {
        name: `gui-${randomUUID().slice(0, 8)}`, path: null, grid_size: 75, drawing_grid_size: 25, show_grid: false, snap_to_grid: false, show_interface_labels: false,
      }, 201);
      hasKeys(created, PROJECT_KEYS);
      expect(typeof created.path).toBe("string"); // the project list joins path and filename
      expect(typeof created.filename).toBe("string");
      projectId = created.project_id;
      P = `/projects/${projectId}`;
      stream = await guiSocket(`${s.url.replace(/^http/, "ws")}/v2${P}/notifications/ws`);
      expect((await stream.next("ping")).cpu_usage_percent).toEqual(expect.any(Number));

      const edited = await gui("PUT", P, {
        name: created.name, auto_open: false, auto_close: false, auto_start: false, scene_width: 2000, scene_height: 1000, zoom: 100,
        show_layers: false, snap_to_grid: true, show_grid: true, grid_size: 75, drawing_grid_size: 25, show_interface_labels: true,
        variables: null, supplier: null,
      }, 200);
      expect(edited).toMatchObject({ snap_to_grid: true, show_grid: true, show_interface_labels: true });
      expect(await controller.next("project.updated", (e) => e.project_id === projectId)).toMatchObject({ show_grid: true });

      await gui("POST", `${P}/close`, {}, 204);
      expect((await controller.next("project.closed", (e) => e.project_id === projectId)).status).toBe("closed");
      stream.close();
      expect((await gui("POST", `${P}/open`, {}, 201)).status).toBe("opened");
      for (const what of ["nodes", "links", "drawings"]) expect(await gui("GET", `${P}/${what}`, undefined, 200)).toEqual([]);
      stream = await guiSocket(`${s.url.replace(/^http/, "ws")}/v2${P}/notifications/ws`);
      await stream.next("ping");
    });

    await step("templates: the preferences pages sync their list (client ids kept), the list follows template.* events", async () => {
      const template_id = randomUUID();
      const vpcsPage = {
        name: "My PC", default_name_format: "PC{0}", base_script_file: "vpcs_base_config.txt", console_type: "telnet", console_auto_start: false,
        symbol: ":/symbols/vpcs_guest.svg", category: 2, template_type: "vpcs", compute_id: "local", template_id,
      };
      await gui("POST", "/templates", vpcsPage, 201);
      const created = await controller.next("template.created", (e) => e.template_id === template_id);
      hasKeys(created, TEMPLATE_KEYS);
      expect(created).toMatchObject({ name: "My PC", category: "guest", builtin: false, compute_id: "local" });
      await gui("PUT", `/templates/${template_id}`, { ...created, name: "My renamed PC" }, 200);
      expect((await controller.next("template.updated", (e) => e.template_id === template_id)).name).toBe("My renamed PC");
      await gui("DELETE", `/templates/${template_id}`, undefined, 204);
      expect((await controller.next("template.deleted", (e) => e.template_id === template_id)).template_id).toBe(template_id);
      expect(await guiError("DELETE", `/templates/${BUILTIN.vpcs}`, undefined, 409)).toBe(`Template ID ${BUILTIN.vpcs} cannot be deleted because it is a builtin`);
    });

    await step("add nodes from the device list: POST P/templates/{id}, each node appears through node.created", async () => {
      for (const [name, type] of [["PC1", "vpcs"], ["PC2", "vpcs"], ["Switch1", "ethernet_switch"], ["Hub1", "ethernet_hub"]] as const) {
        const template = templates.find((t: any) => t.template_id === BUILTIN[type]);
        // Built-ins have no compute: the GUI picks one whose node_types holds the template type ("local" first).
        expect(template.compute_id).toBeNull();
        const compute_id = Object.keys(computeTypes).find((id) => computeTypes[id].includes(template.template_type));
        expect(compute_id).toBe("local");
        const r = await gui("POST", `${P}/templates/${template.template_id}`, { x: -100, y: 50, compute_id }, 201);
        const announced = await stream.next("node.created", (e) => e.node_id === r.node_id);
        expectNode(announced);
        expect(announced).toMatchObject({ name, template_id: template.template_id, console_host: expect.any(String) });
        nodes[name] = announced;
      }
      expect(nodes.Switch1.status).toBe("started");
      expect(nodes.Hub1.status).toBe("started");
      expect(nodes.Switch1.properties.ports_mapping).toHaveLength(8);
    });

    await step("move, rename and configure a node: the answer is only for errors, the state comes back as node.updated", async () => {
      const pc = nodes.PC1;
      const base = { properties: {}, node_type: pc.node_type, node_id: pc.node_id, compute_id: pc.compute_id };
      await gui("PUT", `${P}/nodes/${pc.node_id}`, {
        ...base, x: 120, y: -40, z: 1, symbol: pc.symbol, locked: false,
        label: { text: "PC1", x: 5, y: -25, rotation: 0, style: "font-family: TypeWriter;font-size: 10.0;font-weight: bold;fill: #000000;fill-opacity: 1.0;" },
      }, 200);
      expect(await stream.next("node.updated", (e) => e.node_id === pc.node_id)).toMatchObject({ x: 120, y: -40, label: { x: 5, y: -25 } });
      await gui("PUT", `${P}/nodes/${pc.node_id}`, { ...base, name: "web-1" }, 200);
      expect((await stream.next("node.updated", (e) => e.node_id === pc.node_id)).name).toBe("web-1");
      const sw = nodes.Switch1;
      const ports_mapping = sw.properties.ports_mapping.map((p: any) => (p.port_number === 7 ? { ...p, type: "dot1q", vlan: 1 } : p));
      await gui("PUT", `${P}/nodes/${sw.node_id}`, { properties: { ports_mapping }, node_type: sw.node_type, node_id: sw.node_id, compute_id: "local" }, 200);
      const updated = await stream.next("node.updated", (e) => e.node_id === sw.node_id);
      expect(updated.properties.ports_mapping[7]).toMatchObject({ port_number: 7, type: "dot1q" });

      // Duplicate: the copy is drawn from node.created; then Delete.
      await gui("POST", `${P}/nodes/${pc.node_id}/duplicate`, { x: 200, y: 200, z: 1 }, 201);
      const copy = await stream.next("node.created", (e) => e.node_id !== pc.node_id && e.node_type === "vpcs" && e.x === 200);
      expectNode(copy);
      expect(copy.name).not.toBe("web-1");
      await gui("DELETE", `${P}/nodes/${copy.node_id}`, undefined, 204);
      expect((await stream.next("node.deleted", (e) => e.node_id === copy.node_id)).node_id).toBe(copy.node_id);
    });

    await step("links: create (announced with labelled ends), labels, filters, suspend, delete", async () => {
      const body = (labels: boolean) => ({
        nodes: [
          { node_id: nodes.PC1.node_id, adapter_number: 0, port_number: 0, ...(labels && { label: { text: "e0", x: 10, y: -10, rotation: 0, style: "" } }) },
          { node_id: nodes.Switch1.node_id, adapter_number: 0, port_number: 0, ...(labels && { label: { text: "e0", x: -20, y: 5, rotation: 0, style: "" } }) },
        ],
        filters: {},
        link_style: { color: "#000000", width: 2, type: 1 },
        suspend: false,
      });
      const created = await gui("POST", `${P}/links`, body(false), 201);
      link = await stream.next("link.created", (e) => e.link_id === created.link_id);
      expectLink(link);
      await gui("PUT", `${P}/links/${link.link_id}`, body(true), 201);
      expect((await stream.next("link.updated", (e) => e.link_id === link.link_id)).nodes[0].label.text).toBe("e0");
      expect(Array.isArray(await gui("GET", `${P}/links/${link.link_id}/available_filters`, undefined, 200))).toBe(true);
      await gui("PUT", `${P}/links/${link.link_id}`, { ...body(true), filters: { delay: [50, 5] } }, 201);
      expect((await stream.next("link.updated", (e) => e.link_id === link.link_id)).filters).toEqual({ delay: [50, 5] });
      await gui("PUT", `${P}/links/${link.link_id}`, { ...body(true), filters: { delay: [50, 5] }, suspend: true }, 201);
      expect((await stream.next("link.updated", (e) => e.link_id === link.link_id)).suspend).toBe(true);
      await gui("PUT", `${P}/links/${link.link_id}`, { ...body(true), filters: {}, suspend: false }, 201);

      const spare = await gui("POST", `${P}/links`, { ...body(false), nodes: [
        { node_id: nodes.PC2.node_id, adapter_number: 0, port_number: 0 },
        { node_id: nodes.Hub1.node_id, adapter_number: 0, port_number: 0 },
      ] }, 201);
      await gui("DELETE", `${P}/links/${spare.link_id}`, undefined, 204);
      expect((await stream.next("link.deleted", (e) => e.link_id === spare.link_id)).link_id).toBe(spare.link_id);
      expect(await guiError("POST", `${P}/links`, body(false), 409)).toBe("Port is already used");
    });

    await step("reset all consoles", async () => {
      expect(await gui("POST", `${P}/nodes/console/reset`, {}, 204)).toBeUndefined();
    });

    const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);
    // Without the vpcs package this step is left out; the rest of the session does not depend on it.
    if (hasVpcs) await step("node actions (requires vpcs): start/stop/suspend/reload one node and all nodes", async () => {
      const N = `${P}/nodes/${nodes.PC1.node_id}`;
      const started = await gui("POST", `${N}/start`, {}, 200);
      expectNode(started);
      expect((await stream.next("node.updated", (e) => e.node_id === nodes.PC1.node_id && e.status === "started")).console).toBe(started.console);
      expectNode(await gui("POST", `${N}/reload`, {}, 200));
      expectNode(await gui("POST", `${N}/suspend`, {}, 200));
      expect((await gui("POST", `${N}/stop`, {}, 200)).node_id).toBe(nodes.PC1.node_id);
      await stream.next("node.updated", (e) => e.node_id === nodes.PC1.node_id && e.status === "stopped");
      for (const action of ["start", "suspend", "reload", "stop"]) expect(await gui("POST", `${P}/nodes/${action}`, {}, 204)).toBeUndefined();
      const all = await gui("GET", `${P}/nodes`, undefined, 200);
      expect(all.filter((n: any) => n.node_type === "vpcs").map((n: any) => n.status)).toEqual(["stopped", "stopped"]);
      // A switch never stops (GNS3: builtins always run); the GUI's 404-on-stop path is for nodes already gone.
      expect((await gui("POST", `${P}/nodes/${nodes.Switch1.node_id}/stop`, {}, 200)).status).toBe("started");
      expect(await guiError("POST", `${P}/nodes/${randomUUID()}/stop`, {}, 404)).toMatch(/doesn't exist$/);
    });

    await step("packet capture: start, link.updated capturing, the pcap stream (not JSON), stop", async () => {
      const L = `${P}/links/${link.link_id}`;
      const started = await gui("POST", `${L}/start_capture`, { capture_file_name: "PC1_Ethernet0_to_Switch1_Ethernet0", data_link_type: "DLT_EN10MB" }, 201);
      expect(started).toMatchObject({ capturing: true, capture_compute_id: "local" });
      const announced = await stream.next("link.updated", (e) => e.link_id === link.link_id && e.capturing);
      expect(announced.capture_file_path).toEqual(expect.any(String));
      const abort = new AbortController();
      const pcap = await fetch(`${s.url}/v2${L}/pcap`, { headers: GUI_HEADERS, signal: abort.signal });
      expect(pcap.status).toBe(200);
      expect(pcap.headers.get("content-type")).toBe("application/vnd.tcpdump.pcap");
      abort.abort();
      expect((await gui("POST", `${L}/stop_capture`, {}, 201)).capturing).toBe(false);
      expect((await stream.next("link.updated", (e) => e.link_id === link.link_id && !e.capturing)).capturing).toBe(false);
    });

    const drawings: Record<string, any> = {};
    await step("drawings: the GUI's ids kept, every tool, move (svg only when changed), lock, delete, re-post after a miss", async () => {
      for (const [tool, svg] of Object.entries(GUI_SVG)) {
        const body = { drawing_id: randomUUID(), x: 10, y: 20, z: 1, locked: false, rotation: 0, svg };
        const created = await gui("POST", `${P}/drawings`, body, 201);
        hasKeys(created, DRAWING_KEYS);
        expect(created).toMatchObject(body);
        expect(await stream.next("drawing.created", (e) => e.drawing_id === body.drawing_id)).toEqual(created);
        drawings[tool] = created;
      }
      const note = drawings.note;
      const moved = await gui("PUT", `${P}/drawings/${note.drawing_id}`, { drawing_id: note.drawing_id, x: 40, y: 60, z: 1, locked: false, rotation: 0 }, 201);
      expect(moved).toMatchObject({ x: 40, y: 60, svg: note.svg });
      const update = await stream.next("drawing.updated", (e) => e.drawing_id === note.drawing_id);
      expect(update).toMatchObject({ x: 40, y: 60 });
      expect(update).not.toHaveProperty("svg");
      const edited = GUI_SVG.note.replace("Hello note", "Edited");
      await gui("PUT", `${P}/drawings/${note.drawing_id}`, { drawing_id: note.drawing_id, x: 40, y: 60, z: 1, locked: true, rotation: 0, svg: edited }, 201);
      expect(await stream.next("drawing.updated", (e) => e.drawing_id === note.drawing_id)).toMatchObject({ svg: edited, locked: true });
      expect(await guiError("DELETE", `${P}/drawings/${note.drawing_id}`, undefined, 409)).toBe(`Drawing ID ${note.drawing_id} cannot be deleted because it is locked`);
      await gui("PUT", `${P}/drawings/${note.drawing_id}`, { drawing_id: note.drawing_id, locked: false }, 201);
      await gui("DELETE", `${P}/drawings/${drawings.line.drawing_id}`, undefined, 204);
      expect((await stream.next("drawing.deleted", (e) => e.drawing_id === drawings.line.drawing_id)).drawing_id).toBe(drawings.line.drawing_id);
      delete drawings.line;

      // A drawing deleted elsewhere: the PUT's message contains "doesn't exist", so the GUI re-posts with drawing_id null.
      const missing = randomUUID();
      expect(await guiError("PUT", `${P}/drawings/${missing}`, { drawing_id: missing, x: 1, y: 1, z: 1, locked: false, rotation: 0 }, 404)).toContain("doesn't exist");
      const reposted = await gui("POST", `${P}/drawings`, { drawing_id: null, x: 1, y: 1, z: 1, locked: false, rotation: 0, svg: GUI_SVG.line }, 201);
      await stream.next("drawing.created", (e) => e.drawing_id === reposted.drawing_id);
      drawings.line = reposted;
      expect(await gui("GET", `${P}/drawings`, undefined, 200)).toHaveLength(5);
    });

    await step("snapshots: list, take, restore (the topology announced again, then snapshot.restored), reload, delete", async () => {
      expect(await gui("GET", `${P}/snapshots`, undefined, 200)).toEqual([]);
      const snap = await gui("POST", `${P}/snapshots`, { name: "before-change" }, 201);
      expect(snap).toMatchObject({ snapshot_id: expect.any(String), name: "before-change", created_at: expect.any(Number) });
      expect((await gui("GET", `${P}/snapshots`, undefined, 200)).map((x: any) => x.name)).toEqual(["before-change"]);

      await gui("DELETE", `${P}/drawings/${drawings.rectangle.drawing_id}`, undefined, 204);
      await gui("DELETE", `${P}/nodes/${nodes.Hub1.node_id}`, undefined, 204);
      await stream.rest();
      expect((await gui("POST", `${P}/snapshots/${snap.snapshot_id}/restore`, {}, 201)).project_id).toBe(projectId);
      const restored = await stream.next("snapshot.restored");
      expect(restored).toMatchObject({ snapshot_id: snap.snapshot_id, project_id: projectId });
      const order = stream.messages.map((f) => f.action).filter((a) => a !== "ping");
      const replay = order.slice(order.lastIndexOf("snapshot.restored") - (4 + 1 + 5), order.lastIndexOf("snapshot.restored") + 1);
      expect(replay).toEqual([...Array(4).fill("node.created"), "link.created", ...Array(5).fill("drawing.created"), "snapshot.restored"]);

      // What the GUI does on snapshot.restored: open, then nodes → links → drawings.
      await gui("POST", `${P}/open`, {}, 201);
      const restoredNodes = await gui("GET", `${P}/nodes`, undefined, 200);
      restoredNodes.forEach(expectNode);
      expect(restoredNodes.map((n: any) => [n.name, n.status, n.console_host])).toEqual([
        ["web-1", "stopped", s.ctx.config.host],
        ["PC2", "stopped", s.ctx.config.host],
        ["Switch1", "started", s.ctx.config.host],
        ["Hub1", "started", s.ctx.config.host],
      ]);
      (await gui("GET", `${P}/links`, undefined, 200)).forEach(expectLink);
      const back = await gui("GET", `${P}/drawings`, undefined, 200);
      expect(back.map((d: any) => d.drawing_id)).toContain(drawings.rectangle.drawing_id);
      await gui("DELETE", `${P}/snapshots/${snap.snapshot_id}`, undefined, 204);
    });

    await step("export and import: the wizard's README, the archive (not JSON), import under a client id, open and read back", async () => {
      const readme = await fetch(`${s.url}/v2${P}/files/README.txt`, { method: "POST", headers: { ...GUI_HEADERS, "content-type": "application/octet-stream" }, body: "Lab notes" });
      expect(readme.status).toBe(201);
      expect(readme.headers.get("content-type")).not.toBe("application/json");
      const readBack = await fetch(`${s.url}/v2${P}/files/README.txt`, { headers: GUI_HEADERS });
      expect(await readBack.text()).toBe("Lab notes");
      expect(readBack.headers.get("content-type")).not.toBe("application/json");

      const exported = await fetch(
        `${s.url}/v2${P}/export?include_images=no&include_snapshots=no&reset_mac_addresses=no&keep_compute_ids=no&compression=zip`,
        { headers: GUI_HEADERS },
      );
      expect(exported.status).toBe(200);
      expect(exported.headers.get("content-type")).toBe("application/gns3project");
      expect(exported.headers.get("content-disposition")).toMatch(/^attachment; filename="?.+\.gns3project"?/);
      const archive = Buffer.from(await exported.arrayBuffer());
      expect(archive.subarray(0, 2).toString()).toBe("PK");

      const importedId = randomUUID();
      const imported = await fetch(`${s.url}/v2/projects/${importedId}/import?name=gui-imported`, {
        method: "POST",
        headers: { ...GUI_HEADERS, "content-type": "application/octet-stream" },
        body: archive,
      });
      expect(imported.status).toBe(201);
      expect(imported.headers.get("content-type")).toBe("application/json");
      expect(await imported.json()).toMatchObject({ project_id: importedId, name: "gui-imported", status: "closed" });
      await gui("POST", `/projects/${importedId}/open`, {}, 201);
      const importedNodes = await gui("GET", `/projects/${importedId}/nodes`, undefined, 200);
      expect(importedNodes.map((n: any) => [n.name, n.status, n.console_host])).toEqual([
        ["web-1", "stopped", s.ctx.config.host],
        ["PC2", "stopped", s.ctx.config.host],
        ["Switch1", "started", s.ctx.config.host],
        ["Hub1", "started", s.ctx.config.host],
      ]);
      (await gui("GET", `/projects/${importedId}/links`, undefined, 200)).forEach(expectLink);
      const importedDrawings = await gui("GET", `/projects/${importedId}/drawings`, undefined, 200);
      importedDrawings.forEach((d: any) => hasKeys(d, DRAWING_KEYS));
      expect(importedDrawings.map((d: any) => d.svg).sort()).toEqual((await gui("GET", `${P}/drawings`, undefined, 200)).map((d: any) => d.svg).sort());
    });

    await step("project duplicate, close and delete, as the project dialog does them", async () => {
      const copy = await gui("POST", `${P}/duplicate`, { name: "gui-copy", reset_mac_addresses: false }, 201);
      expect(copy).toMatchObject({ name: "gui-copy", status: "closed", auto_close: false });
      expect((await gui("GET", "/projects", undefined, 200)).map((p: any) => p.project_id)).toContain(copy.project_id);
      await gui("POST", `${P}/close`, {}, 204);
      await controller.next("project.closed", (e) => e.project_id === projectId);
      await gui("DELETE", `/projects/${copy.project_id}`, undefined, 204);
      expect((await guiError("POST", `/projects/${copy.project_id}/close`, {}, 404))).toMatch(/doesn't exist$/);
    });
  }, 300_000);
});

/**
 * Issue 21 from the GUI: a Cloud and a NAT node from their built-in templates, a Docker node from a template made
 * the way the docker wizard makes it (docker-cloud-nat reference §5), each linked to a switch from the link dialog,
 * started and stopped one by one and all together, with what the GUI reads back (node.created/updated, ports with
 * names, symbols, the cloud's interfaces). Real host networking, dockerd and the test image.
 */
const HOST_BUILTIN = { cloud: "39e257dc-8412-3174-b6b3-0ee3ed6a43e9", nat: "df8f4ea9-33b7-3e96-86a2-c39bc9bb649c" };
const hostReady = hostNodesReady();
const IMAGE = hostReady ? testDockerImage() : "patchbay-busybox:latest";

describe.skipIf(!hostReady)("GNS3 GUI 2.2.59: Cloud, NAT and Docker nodes (requires root, dockerd, socat, dnsmasq, nftables)", () => {
  let lab: HostNodesLab;
  let controller: Awaited<ReturnType<typeof guiSocket>> | undefined;
  let stream: Awaited<ReturnType<typeof guiSocket>> | undefined;
  beforeAll(async () => {
    lab = await hostNodesLab("pbg");
  });
  afterAll(async () => {
    controller?.close();
    stream?.close();
    await lab?.release();
  });

  async function gui(method: string, url: string, body: unknown, status: number) {
    const r = await call(lab.server.url, method, `/v2${url}`, body, GUI_HEADERS);
    expect(r.status, `${method} ${url} → ${r.text}`).toBe(status);
    if (r.text) expect(r.headers.get("content-type"), `${method} ${url}`).toBe("application/json");
    return r.body;
  }

  it("docker wizard → Cloud, NAT and Docker from the device list → links to a switch → start/stop each and all → delete", async () => {
    const s = lab.server;
    const ws = s.url.replace(/^http/, "ws");
    let computeTypes: Record<string, string[]> = {};
    let templates: any[] = [];
    await step("connect: the local compute offers cloud, nat and docker; the built-in Cloud and NAT templates and their icons", async () => {
      controller = await guiSocket(`${ws}/v2/notifications/ws`);
      await controller.next("ping");
      const computes = await gui("GET", "/computes", undefined, 200);
      computeTypes = Object.fromEntries(computes.map((c: any) => [c.compute_id, c.capabilities.node_types]));
      expect(computeTypes.local).toEqual(expect.arrayContaining(["cloud", "nat", "docker", "ethernet_switch"]));
      templates = await gui("GET", "/templates", undefined, 200);
      for (const [type, id] of Object.entries(HOST_BUILTIN)) {
        const t = templates.find((x: any) => x.template_id === id);
        hasKeys(t, TEMPLATE_KEYS);
        expect(t).toMatchObject({ template_type: type, builtin: true, compute_id: null, category: "guest", symbol: `:/symbols/${type}.svg` });
      }
      expect(templates.find((x: any) => x.template_id === HOST_BUILTIN.cloud).name).toBe("Cloud");
      expect(templates.find((x: any) => x.template_id === HOST_BUILTIN.nat).name).toBe("NAT");
      for (const symbol of [":/symbols/cloud.svg", ":/symbols/nat.svg", ":/symbols/docker_guest.svg"]) {
        const icon = await fetch(`${s.url}/v2/symbols/${encodeURIComponent(symbol).replaceAll("%2F", "/")}/raw`, { headers: GUI_HEADERS });
        expect(icon.status, symbol).toBe(200);
        expect(icon.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
        expect(await icon.text()).toContain("<svg");
      }
    });

    const template_id = randomUUID();
    const templateName = IMAGE.replace(/:[^:/]*$/, "").replaceAll("/", "-");
    await step("the docker wizard: image list, then POST /templates with the GUI defaults and a client id", async () => {
      const images = await gui("GET", "/computes/local/docker/images", undefined, 200);
      expect(images).toContainEqual({ image: IMAGE });
      await gui("POST", "/templates", {
        default_name_format: "{name}-{0}", usage: "", symbol: ":/symbols/docker_guest.svg", category: 2, start_command: "", name: templateName,
        image: IMAGE, adapters: 1, mac_address: "", custom_adapters: [], environment: "", console_type: "telnet", console_auto_start: false,
        console_resolution: "1024x768", console_http_port: 80, console_http_path: "/", extra_hosts: "", extra_volumes: [], template_type: "docker",
        template_id, compute_id: "local",
      }, 201);
      const created = await controller!.next("template.created", (e) => e.template_id === template_id);
      hasKeys(created, TEMPLATE_KEYS);
      expect(created).toMatchObject({ name: templateName, template_type: "docker", builtin: false, category: "guest", compute_id: "local", image: IMAGE });
      templates.push(created);
    });

    const created = await gui("POST", "/projects", {
      name: `gui-host-${randomUUID().slice(0, 8)}`, path: null, grid_size: 75, drawing_grid_size: 25, show_grid: false, snap_to_grid: false, show_interface_labels: false,
    }, 201);
    const projectId = created.project_id as string;
    const P = `/projects/${projectId}`;
    stream = await guiSocket(`${ws}/v2${P}/notifications/ws`);
    await stream.next("ping");

    const nodes: Record<string, any> = {};
    await step("add from the device list: POST P/templates/{id} (+ compute_id only for the built-ins), nodes drawn from node.created", async () => {
      for (const [name, id] of [["Switch1", BUILTIN.ethernet_switch], ["Cloud1", HOST_BUILTIN.cloud], ["NAT1", HOST_BUILTIN.nat], [`${templateName}-1`, template_id]] as const) {
        const template = templates.find((t: any) => t.template_id === id);
        const body = template.compute_id === null
          ? { x: 0, y: 100, compute_id: Object.keys(computeTypes).find((c) => computeTypes[c].includes(template.template_type)) }
          : { x: 0, y: 100 };
        const r = await gui("POST", `${P}/templates/${id}`, body, 201);
        const announced = await stream!.next("node.created", (e) => e.node_id === r.node_id, 30_000);
        expectNode(announced);
        expect(announced).toMatchObject({ name, template_id: id, symbol: template.symbol, compute_id: "local" });
        nodes[template.template_type] = announced;
      }
      const { cloud, nat, docker } = nodes;
      // Cloud: started, no console, one port per non-special host interface, the interface list of its dialog.
      expect(cloud).toMatchObject({ status: "started", console: null, console_type: null });
      expect(cloud.properties).toMatchObject({ remote_console_host: "", remote_console_port: 23, remote_console_type: "none", remote_console_http_path: "/" });
      for (const i of cloud.properties.interfaces) expect(Object.keys(i).sort()).toEqual(["name", "special", "type"]);
      expect(cloud.properties.interfaces.filter((i: any) => !i.special).map((i: any) => i.name)).toContain(lab.cloudInterface);
      expect(cloud.ports.map((p: any) => p.name)).toContain(lab.cloudInterface);
      expect(cloud.properties.ports_mapping.find((m: any) => m.name === lab.cloudInterface)).toMatchObject({ interface: lab.cloudInterface, type: "ethernet" });
      // NAT: started, one port nat0.
      expect(nat).toMatchObject({ status: "started", symbol: ":/symbols/nat.svg" });
      expect(nat.ports.map((p: any) => [p.name, p.short_name, p.link_type])).toEqual([["nat0", "nat0", "ethernet"]]);
      // Docker: a stopped container with a telnet console and eth0.
      expect(docker).toMatchObject({ status: "stopped", console_type: "telnet", console: expect.any(Number) });
      expect(docker.properties).toMatchObject({ image: IMAGE, adapters: 1 });
      expect(docker.ports.map((p: any) => [p.adapter_number, p.port_number, p.name, p.link_type, p.data_link_types])).toEqual([
        [0, 0, "eth0", "ethernet", { Ethernet: "DLT_EN10MB" }],
      ]);
      expect(await projectContainers(projectId)).toHaveLength(1);
    });

    const links: Record<string, string> = {};
    await step("link each to the switch from the link dialog (POST, then PUT with the labels)", async () => {
      const ends = [
        ["docker", 0, 0, 0],
        ["nat", 0, 0, 1],
        ["cloud", nodes.cloud.ports.find((p: any) => p.name === lab.cloudInterface).adapter_number, nodes.cloud.ports.find((p: any) => p.name === lab.cloudInterface).port_number, 2],
      ] as const;
      for (const [type, adapter_number, port_number, swPort] of ends) {
        const body = (labels: boolean) => ({
          nodes: [
            { node_id: nodes[type].node_id, adapter_number, port_number, ...(labels && { label: { text: "a", x: 10, y: -10, rotation: 0, style: "" } }) },
            { node_id: nodes.ethernet_switch.node_id, adapter_number: 0, port_number: swPort, ...(labels && { label: { text: `e${swPort}`, x: -20, y: 5, rotation: 0, style: "" } }) },
          ],
          filters: {},
          link_style: { color: "#000000", width: 2, type: 1 },
          suspend: false,
        });
        const r = await gui("POST", `${P}/links`, body(false), 201);
        expectLink(await stream!.next("link.created", (e) => e.link_id === r.link_id));
        await gui("PUT", `${P}/links/${r.link_id}`, body(true), 201);
        expect((await stream!.next("link.updated", (e) => e.link_id === r.link_id)).nodes[1].label.text).toBe(`e${swPort}`);
        links[type] = r.link_id;
      }
      (await gui("GET", `${P}/links`, undefined, 200)).forEach(expectLink);
    });

    const statuses = async () =>
      Object.fromEntries((await gui("GET", `${P}/nodes`, undefined, 200)).map((n: any) => (expectNode(n), [n.node_type, n.status])));
    await step("start and stop each node from its context menu: 200 + node JSON, the state from node.updated", async () => {
      for (const type of ["docker", "cloud", "nat"]) {
        const id = nodes[type].node_id;
        expectNode(await gui("POST", `${P}/nodes/${id}/start`, {}, 200));
        if (type === "docker") await stream!.next("node.updated", (e) => e.node_id === id && e.status === "started", 30_000);
      }
      expect(await statuses()).toEqual({ ethernet_switch: "started", cloud: "started", nat: "started", docker: "started" });
      const c = (await projectContainers(projectId))[0];
      expect(c.State).toBe("running");
      for (const type of ["docker", "cloud", "nat"]) {
        const id = nodes[type].node_id;
        expectNode(await gui("POST", `${P}/nodes/${id}/stop`, {}, 200));
        if (type === "docker") await stream!.next("node.updated", (e) => e.node_id === id && e.status === "stopped", 30_000);
      }
      // As in GNS3: cloud and NAT always run; the container is stopped, not removed.
      expect(await statuses()).toEqual({ ethernet_switch: "started", cloud: "started", nat: "started", docker: "stopped" });
      expect((await projectContainers(projectId)).map((x) => x.State)).toEqual(["exited"]);
    });

    await step("start all / stop all from the toolbar: 204, then the nodes' state", async () => {
      expect(await gui("POST", `${P}/nodes/start`, {}, 204)).toBeUndefined();
      await stream!.next("node.updated", (e) => e.node_id === nodes.docker.node_id && e.status === "started", 30_000);
      expect(await statuses()).toEqual({ ethernet_switch: "started", cloud: "started", nat: "started", docker: "started" });
      expect(await gui("POST", `${P}/nodes/stop`, {}, 204)).toBeUndefined();
      await stream!.next("node.updated", (e) => e.node_id === nodes.docker.node_id && e.status === "stopped", 30_000);
      expect(await statuses()).toEqual({ ethernet_switch: "started", cloud: "started", nat: "started", docker: "stopped" });
    });

    await step("delete the docker node, the links, then the project: no container left", async () => {
      await gui("DELETE", `${P}/nodes/${nodes.docker.node_id}`, undefined, 204);
      expect((await stream!.next("node.deleted", (e) => e.node_id === nodes.docker.node_id)).node_id).toBe(nodes.docker.node_id);
      // The runtime removes the container when it follows node.deleted, a moment after the 204 (no client reads it).
      await waitFor(async () => (await projectContainers(projectId)).length === 0, 15_000, "the container to go");
      expect((await gui("GET", `${P}/links`, undefined, 200)).map((l: any) => l.link_id).sort()).toEqual([links.cloud, links.nat].sort());
      await gui("DELETE", `/templates/${template_id}`, undefined, 204);
      await gui("DELETE", P, undefined, 204);
    });
  }, 180_000);
});
