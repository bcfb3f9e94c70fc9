import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controllerTopic, projectTopic } from "../../src/emulation/core/events.js";
import { asGns3 } from "../support/gns3-events.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { getBytes, postBytes, unzip, zip } from "./archive-support.js";

const end = (node_id: string, port_number = 0) => ({ node_id, adapter_number: 0, port_number });
const STYLE = "font-family: TypeWriter;font-size: 10.0;font-weight: bold;fill: #000000;fill-opacity: 1.0;";

/** A project.gns3 shaped like the one GNS3 2.2.59 exported in the reference transcript (§160). */
function referenceTopology() {
  const label = (text: string, x: number | null, y: number) => ({ rotation: 0, style: null, text, x, y });
  const vpcs = (node_id: string, name: string, console: number, x: number, y: number) => ({
    compute_id: "local",
    console,
    console_auto_start: false,
    console_type: "telnet",
    custom_adapters: [],
    first_port_name: null,
    height: 59,
    label: label(name, null, -40),
    locked: false,
    name,
    node_id,
    node_type: "vpcs",
    port_name_format: "Ethernet{0}",
    port_segment_size: 0,
    properties: {},
    symbol: ":/symbols/computer.svg",
    template_id: null,
    width: 65,
    x,
    y,
    z: 1,
  });
  const switchPorts = Array.from({ length: 8 }, (_, i) => ({ name: `Ethernet${i}`, port_number: i, type: "access", vlan: 1 }));
  const hubPorts = Array.from({ length: 8 }, (_, i) => ({ name: `Ethernet${i}`, port_number: i }));
  return {
    auto_close: true,
    auto_open: false,
    auto_start: false,
    drawing_grid_size: 25,
    grid_size: 75,
    name: "ref1",
    project_id: "e0852f03-99ed-4e33-98e1-a68f8d48bef0",
    revision: 9,
    scene_height: 1000,
    scene_width: 3000,
    show_grid: true,
    show_interface_labels: false,
    show_layers: false,
    snap_to_grid: false,
    supplier: null,
    topology: {
      computes: [],
      drawings: [
        { drawing_id: "2a3ab237-801c-4e43-8923-62c263805593", locked: false, rotation: 0, svg: "<svg height=\"10\" width=\"10\"></svg>", x: 1, y: 2, z: 2 },
      ],
      links: [
        {
          filters: {},
          link_id: "d029b28a-946f-4597-850b-9435a97d713f",
          link_style: { color: "#ff0000", type: 1, width: 2 },
          nodes: [
            { adapter_number: 0, label: { style: STYLE, text: "0/0" }, node_id: "55c07a74-3e25-43d2-9248-02a209dbb98c", port_number: 0 },
            { adapter_number: 0, label: { style: STYLE, text: "0/0" }, node_id: "5272aa17-c506-42cc-812c-dcb02ad7257b", port_number: 0 },
          ],
          suspend: false,
        },
        {
          filters: {},
          link_id: "495d926c-6df8-481d-9ab4-8b8b1110b28a",
          link_style: {},
          nodes: [
            { adapter_number: 0, label: { text: "my-label", x: 10, y: 10 }, node_id: "2916eeab-7446-41bd-b94d-0fb6aaa47813", port_number: 0 },
            { adapter_number: 0, label: { style: STYLE, text: "0/1" }, node_id: "5272aa17-c506-42cc-812c-dcb02ad7257b", port_number: 1 },
          ],
          suspend: false,
        },
      ],
      nodes: [
        { ...vpcs("55c07a74-3e25-43d2-9248-02a209dbb98c", "PC1", 5000, 10, 20), label: label("PC1", 5, -25), z: 2 },
        vpcs("2916eeab-7446-41bd-b94d-0fb6aaa47813", "PCB", 5002, -100, 100),
        {
          ...vpcs("5272aa17-c506-42cc-812c-dcb02ad7257b", "SW1", 5004, 100, 0),
          console_type: "none",
          node_type: "ethernet_switch",
          properties: { ports_mapping: switchPorts },
        },
        {
          ...vpcs("71a9dfef-e974-4d34-bf6e-052b95d4f00e", "HUB1", 0, 0, 0),
          console: null,
          console_type: "none",
          node_type: "ethernet_hub",
          properties: { ports_mapping: hubPorts },
        },
      ],
    },
    type: "topology",
    variables: null,
    version: "2.2.59",
    zoom: 100,
  };
}

describe("GNS3 export and import", () => {
  let s: TestServer;
  let src: any;
  let P: string;
  let pc1: string, pc2: string, sw: string;

  beforeAll(async () => {
    s = await startTestServer({ uploadLimit: "1mb" });
    src = (await call(s.url, "POST", "/v2/projects", { name: "ref1", scene_width: 3000 })).body;
    P = `/v2/projects/${src.project_id}`;
    const node = async (body: object) => (await call(s.url, "POST", `${P}/nodes`, { compute_id: "local", ...body })).body.node_id as string;
    pc1 = await node({ name: "PC1", node_type: "vpcs" });
    pc2 = await node({ name: "PC2", node_type: "vpcs" });
    sw = await node({ name: "SW1", node_type: "ethernet_switch" });
    expect((await call(s.url, "POST", `${P}/links`, { nodes: [end(pc1), end(sw)] })).status).toBe(201);
    expect((await call(s.url, "POST", `${P}/links`, { nodes: [end(pc2), end(sw, 1)] })).status).toBe(201);
    // Files the archive must carry (per-node data, user files) and leave out (logs, captures).
    for (const d of [`project-files/vpcs/${pc1}`, "project-files/captures", "notes"]) fs.mkdirSync(path.join(src.path, d), { recursive: true });
    fs.writeFileSync(path.join(src.path, `project-files/vpcs/${pc1}/startup.vpc`), "ip 10.0.0.1/24");
    fs.writeFileSync(path.join(src.path, "project-files/captures/l1.pcap"), "pcap");
    fs.writeFileSync(path.join(src.path, "notes/hello.txt"), "hello");
    fs.writeFileSync(path.join(src.path, "vpcs.log"), "log");
    fs.writeFileSync(path.join(src.path, "pc_log.txt"), "log");
    // A symlink to a file outside the project must not smuggle that file into the archive.
    fs.symlinkSync("/etc/hostname", path.join(src.path, "outside-link"));
    // A MAC address in a node's properties, to be reset on request.
    const props = JSON.parse((await s.ctx.db.node.findUniqueOrThrow({ where: { id: pc2 } })).propertiesJson);
    await s.ctx.db.node.update({ where: { id: pc2 }, data: { propertiesJson: JSON.stringify({ ...props, mac_address: "00:50:79:66:68:01" }) } });
    expect((await call(s.url, "POST", `${P}/snapshots`, { name: "snap1" })).status).toBe(201);
    // The archive of the project as built here, which the import tests read (the export test checks its own).
    const archive = await getBytes(s.url, `${P}/export`);
    expect(archive.status).toBe(200);
    exported = archive.body;
  });
  afterAll(() => s.close());

  let exported: Buffer;

  it("exports a zip with project.gns3 first, node files, without logs, captures, snapshots or the .gns3 file", async () => {
    const r = await getBytes(s.url, `${P}/export`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/gns3project");
    expect(r.headers.get("content-disposition")).toBe('attachment; filename="ref1.gns3project"');
    const entries = await unzip(r.body);
    const names = entries.map((e) => e.name);
    expect(names[0]).toBe("project.gns3");
    expect(names).toEqual(expect.arrayContaining([`project-files/vpcs/${pc1}/startup.vpc`, "notes/hello.txt"]));
    for (const gone of ["ref1.gns3", "vpcs.log", "pc_log.txt", "project-files/captures/l1.pcap", "outside-link"]) expect(names).not.toContain(gone);
    expect(names.some((n) => n.startsWith("snapshots"))).toBe(false);
    expect(entries.find((e) => e.name === "project.gns3")!.method).toBe(8);
    const doc = JSON.parse(entries[0].data.toString());
    expect(doc).toMatchObject({ name: "ref1", project_id: src.project_id, revision: 9, version: "2.2.59", type: "topology", scene_width: 3000 });
    expect(doc.topology.nodes).toHaveLength(3);
    expect(doc.topology.links).toHaveLength(2);
    expect(doc.topology.nodes.every((n: any) => n.compute_id === "local")).toBe(true);
    expect(doc.topology.computes).toEqual([]);
    for (const n of doc.topology.nodes) {
      for (const k of ["project_id", "status", "ports", "console_host", "command_line", "node_directory"]) expect(n).not.toHaveProperty(k);
    }
    expect(doc.topology.nodes.find((n: any) => n.name === "PC2").properties.mac_address).toBe("00:50:79:66:68:01");
  });

  it("honours include_snapshots, reset_mac_addresses and compression=none", async () => {
    const r = await getBytes(s.url, `${P}/export?include_snapshots=yes&include_images=no&reset_mac_addresses=yes&compression=none`);
    expect(r.status).toBe(200);
    const entries = await unzip(r.body);
    expect(entries.every((e) => e.method === 0)).toBe(true);
    expect(entries.map((e) => e.name)).toEqual(expect.arrayContaining(["snapshots/snapshots.conf", "snapshots/snap1.gns3snapshot"]));
    const doc = JSON.parse(entries[0].data.toString());
    expect(doc.topology.nodes.find((n: any) => n.name === "PC2").properties.mac_address).toBeNull();
  });

  it("keeps remote compute ids and lists those computes only with keep_compute_ids=yes", async () => {
    const { body: p } = await call(s.url, "POST", "/v2/projects", { name: "remote" });
    await s.ctx.db.compute.create({ data: { id: "remote1", name: "Remote", protocol: "http", host: "10.0.0.1", port: 3080 } });
    const r = await call(s.url, "POST", `/v2/projects/${p.project_id}/nodes`, { compute_id: "remote1", name: "R1", node_type: "ethernet_hub" });
    expect(r.status).toBe(201);
    const doc = async (q: string) => JSON.parse((await unzip((await getBytes(s.url, `/v2/projects/${p.project_id}/export${q}`)).body))[0].data.toString());
    const portable = await doc("");
    expect(portable.topology.nodes[0].compute_id).toBe("local");
    expect(portable.topology.computes).toEqual([]);
    const kept = await doc("?keep_compute_ids=yes");
    expect(kept.topology.nodes[0].compute_id).toBe("remote1");
    expect(kept.topology.computes).toEqual([{ compute_id: "remote1", name: "Remote", protocol: "http", host: "10.0.0.1", port: 3080 }]);
  });

  it("refuses to export while a node runs (409), 404s an unknown project", async () => {
    await s.ctx.db.node.update({ where: { id: pc1 }, data: { status: "started" } });
    const r = await call(s.url, "GET", `${P}/export`);
    expect(r.body).toEqual({ message: "Project must be stopped in order to export it", status: 409 });
    await s.ctx.db.node.update({ where: { id: pc1 }, data: { status: "stopped" } });
    expect((await call(s.url, "GET", "/v2/projects/692c077c-27e9-405b-9f7b-e929348a27c2/export")).status).toBe(404);
  });

  it("re-imports an export as a closed project with new ids, node files following their node", async () => {
    const id = "36d2734a-8665-4fa3-83c3-3480ea4cf3d1";
    const events: any[] = [];
    const sub = s.ctx.bus.subscribe(controllerTopic);
    void (async () => {
      for await (const e of sub) events.push(asGns3(s.ctx, e));
    })();
    const r = await postBytes(s.url, `/v2/projects/${id}/import?name=imported-ref`, exported);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      project_id: id,
      name: "imported-ref",
      filename: "imported-ref.gns3",
      status: "closed",
      auto_close: true,
      auto_open: false,
      auto_start: false,
      scene_width: 3000,
      path: path.join(s.dataDir, "projects", id),
    });
    for (let i = 0; i < 50 && !events.length; i++) await new Promise((res) => setTimeout(res, 10));
    expect(events[0]).toEqual({ action: "project.created", event: r.body });
    sub.return?.();

    const opened = await call(s.url, "POST", `/v2/projects/${id}/open`);
    expect(opened.body.status).toBe("opened");
    const nodes = (await call(s.url, "GET", `/v2/projects/${id}/nodes`)).body;
    expect(nodes.map((n: any) => n.name).sort()).toEqual(["PC1", "PC2", "SW1"]);
    expect(nodes.map((n: any) => n.node_id)).not.toContain(pc1);
    const newPc1 = nodes.find((n: any) => n.name === "PC1");
    const sourceConsoles = (await call(s.url, "GET", `${P}/nodes`)).body.map((n: any) => n.console).filter((c: any) => c !== null);
    for (const n of nodes) if (n.console !== null) expect(sourceConsoles).not.toContain(n.console);
    const links = (await call(s.url, "GET", `/v2/projects/${id}/links`)).body;
    expect(links).toHaveLength(2);
    expect(links.flatMap((l: any) => l.nodes.map((e: any) => e.node_id))).toContain(newPc1.node_id);
    const vpc = await call(s.url, "GET", `/v2/projects/${id}/files/project-files/vpcs/${newPc1.node_id}/startup.vpc`);
    expect(vpc.text).toBe("ip 10.0.0.1/24");
    expect((await call(s.url, "GET", `/v2/projects/${id}/files/notes/hello.txt`)).text).toBe("hello");
    expect(fs.existsSync(path.join(s.dataDir, "projects", id, "project.gns3"))).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(s.dataDir, "projects", id, "imported-ref.gns3"), "utf8")).name).toBe("imported-ref");
  });

  it("picks a free name when the archive's name is taken, and refuses a known project id", async () => {
    const r = await postBytes(s.url, "/v2/projects/4b1e0f55-63a5-4bd9-9a40-3a0f5a9a1f01/import", exported);
    expect(r.status).toBe(201);
    expect(r.body.name).toBe("ref1-1");
    const again = await postBytes(s.url, "/v2/projects/4b1e0f55-63a5-4bd9-9a40-3a0f5a9a1f01/import", exported);
    expect(again.status).toBe(409);
  });

  it("brings snapshots along (include_snapshots) under new ids, and they restore", async () => {
    const withSnaps = (await getBytes(s.url, `${P}/export?include_snapshots=yes`)).body;
    const id = "4b1e0f55-63a5-4bd9-9a40-3a0f5a9a1f02";
    expect((await postBytes(s.url, `/v2/projects/${id}/import?name=with-snaps`, withSnaps)).status).toBe(201);
    const snaps = (await call(s.url, "GET", `/v2/projects/${id}/snapshots`)).body;
    expect(snaps.map((x: any) => [x.name, x.project_id])).toEqual([["snap1", id]]);
    const original = (await call(s.url, "GET", `${P}/snapshots`)).body[0];
    expect(snaps[0].snapshot_id).not.toBe(original.snapshot_id);
    await call(s.url, "POST", `/v2/projects/${id}/open`);
    const restored = await call(s.url, "POST", `/v2/projects/${id}/snapshots/${snaps[0].snapshot_id}/restore`);
    expect(restored.status).toBe(201);
    const names = (await call(s.url, "GET", `/v2/projects/${id}/nodes`)).body.map((n: any) => n.name).sort();
    expect(names).toEqual(["PC1", "PC2", "SW1"]);
  });

  it("rejects what is not a GNS3 project (409) and oversized bodies (413)", async () => {
    const id = "cb6a3610-e068-468f-9d91-737f03fabb38";
    const I = `/v2/projects/${id}/import`;
    expect(await postBytes(s.url, I, Buffer.from("not a zip"))).toMatchObject({
      status: 409,
      body: { message: "Cannot import project, not a GNS3 project (invalid zip)", status: 409 },
    });
    expect((await postBytes(s.url, I, await zip({ "a.txt": "x" }))).body.message).toBe(
      "Cannot import project, project.gns3 file could not be found",
    );
    expect((await postBytes(s.url, I, await zip({ "project.gns3": "{nope" }))).body.message).toBe(
      "Cannot import project, the project.gns3 file is corrupted",
    );
    const newer = { ...referenceTopology(), revision: 10 };
    const rNewer = await postBytes(s.url, I, await zip({ "project.gns3": JSON.stringify(newer) }));
    expect(rNewer.status).toBe(409);
    expect(rNewer.body.message).toMatch(/created with more recent version of GNS3/);
    const { topology: _t, ...noTopology } = referenceTopology();
    expect((await postBytes(s.url, I, await zip({ "project.gns3": JSON.stringify(noTopology) }))).status).toBe(409);
    expect((await postBytes(s.url, `${I}?path=/tmp/x.gns3`, exported)).status).toBe(409);
    const big = await postBytes(s.url, I, Buffer.alloc(2 * 1024 * 1024));
    expect(big.status).toBe(413);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).status).toBe(404);
    expect(fs.existsSync(path.join(s.dataDir, "projects", id))).toBe(false);
  });

  it("imports a .gns3project shaped like GNS3 2.2.59's, then opens it with node/link/drawing events", async () => {
    const ref = referenceTopology();
    const pcId = "55c07a74-3e25-43d2-9248-02a209dbb98c";
    const archive = await zip({
      "project.gns3": JSON.stringify(ref, null, 4),
      "hello.txt": "hello world",
      [`project-files/vpcs/${pcId}/startup.vpc`]: "set pcname PC1",
      "project-files/dynamips/dynamips_i1_stdout.txt": "",
    });
    const id = "7f1c2c55-1111-4a2b-8c3d-0123456789ab";
    const r = await postBytes(s.url, `/v2/projects/${id}/import?name=from-gns3`, archive);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "from-gns3", status: "closed", scene_width: 3000, show_grid: true });

    const events: any[] = [];
    const sub = s.ctx.bus.subscribe(projectTopic(id));
    void (async () => {
      for await (const e of sub) events.push(asGns3(s.ctx, e));
    })();
    await call(s.url, "POST", `/v2/projects/${id}/open`);
    for (let i = 0; i < 100 && events.length < 7; i++) await new Promise((res) => setTimeout(res, 10));
    sub.return?.();
    expect(events.map((e) => e.action)).toEqual([
      ...Array(4).fill("node.created"),
      "link.created",
      "link.created",
      "drawing.created",
    ]);

    const nodes = (await call(s.url, "GET", `/v2/projects/${id}/nodes`)).body;
    expect(nodes.map((n: any) => n.name).sort()).toEqual(["HUB1", "PC1", "PCB", "SW1"]);
    const pc = nodes.find((n: any) => n.name === "PC1");
    expect(pc.node_id).not.toBe(pcId);
    expect(pc.label).toMatchObject({ text: "PC1", x: 5, y: -25 });
    const swPorts = nodes.find((n: any) => n.name === "SW1").properties.ports_mapping;
    expect(swPorts).toHaveLength(8);
    const links = (await call(s.url, "GET", `/v2/projects/${id}/links`)).body;
    expect(links.map((l: any) => l.link_style)).toEqual(expect.arrayContaining([{ color: "#ff0000", type: 1, width: 2 }]));
    expect(links.flatMap((l: any) => l.nodes.map((e: any) => e.label.text))).toContain("my-label");
    expect((await call(s.url, "GET", `/v2/projects/${id}/files/project-files/vpcs/${pc.node_id}/startup.vpc`)).text).toBe("set pcname PC1");
    expect((await call(s.url, "GET", `/v2/projects/${id}/stats`)).body).toEqual({ nodes: 4, links: 2, drawings: 1, snapshots: 0 });
  });

  it("imports a minimal topology (only the required keys; links without labels) in document order", async () => {
    const ids = ["1", "2", "3"].map((d) => `00000000-0000-4000-8000-00000000000${d}`);
    const doc = {
      project_id: "00000000-0000-4000-8000-0000000000aa",
      name: "minimal",
      type: "topology",
      revision: 8,
      version: "2.1.0",
      topology: {
        nodes: [
          { node_id: ids[0], node_type: "vpcs", name: "B" },
          { node_id: ids[1], node_type: "ethernet_hub", name: "A" },
        ],
        links: [{ link_id: ids[2], nodes: [{ node_id: ids[0], adapter_number: 0, port_number: 0 }, { node_id: ids[1], adapter_number: 0, port_number: 3 }] }],
        drawings: [],
        computes: [],
      },
    };
    const id = "00000000-0000-4000-8000-0000000000bb";
    const r = await postBytes(s.url, `/v2/projects/${id}/import`, await zip({ "project.gns3": JSON.stringify(doc) }));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "minimal", scene_width: 2000, zoom: 100 });
    await call(s.url, "POST", `/v2/projects/${id}/open`);
    expect((await call(s.url, "GET", `/v2/projects/${id}/nodes`)).body.map((n: any) => n.name)).toEqual(["B", "A"]);
    expect((await call(s.url, "GET", `/v2/projects/${id}/links`)).body).toHaveLength(1);
  });

  it("duplicates with nodes, links and files under new ids and free console ports", async () => {
    const d = await call(s.url, "POST", `${P}/duplicate`, { name: "dup-ref", reset_mac_addresses: true });
    expect(d.status).toBe(201);
    const D = `/v2/projects/${d.body.project_id}`;
    await call(s.url, "POST", `${D}/open`);
    const nodes = (await call(s.url, "GET", `${D}/nodes`)).body;
    expect(nodes.map((n: any) => n.name).sort()).toEqual(["PC1", "PC2", "SW1"]);
    expect(nodes.find((n: any) => n.name === "PC2").properties.mac_address).toBeNull();
    expect((await call(s.url, "GET", `${D}/links`)).body).toHaveLength(2);
    expect((await call(s.url, "GET", `${D}/snapshots`)).body.map((x: any) => x.name)).toEqual(["snap1"]);
    const newPc1 = nodes.find((n: any) => n.name === "PC1").node_id;
    expect((await call(s.url, "GET", `${D}/files/project-files/vpcs/${newPc1}/startup.vpc`)).text).toBe("ip 10.0.0.1/24");
    // The source is untouched.
    expect((await call(s.url, "GET", `${P}/nodes`)).body.map((n: any) => n.node_id).sort()).toEqual([pc1, pc2, sw].sort());
  });
});
