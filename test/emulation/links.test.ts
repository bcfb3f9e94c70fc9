import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { makeNode, makeProject, ndjsonStream } from "./nodes-support.js";

const STYLE = "font-family: TypeWriter;font-size: 10.0;font-weight: bold;fill: #000000;fill-opacity: 1.0;";
const end = (node_id: string, port_number = 0, extra: object = {}) => ({ node_id, adapter_number: 0, port_number, ...extra });

/**
 * Every test builds its own project: PC1, PC2, SW1, HUB1 and two clouds, and (unless it asks for none) the two
 * links PC1 0/0 – SW1 0/0 (`linkId`) and PC2 0/0 – SW1 0/1 (`link2Id`), so no test depends on another's leftovers.
 */
async function topology(s: TestServer, { links = true } = {}) {
  const pid = await makeProject(s);
  const P = `/v2/projects/${pid}`;
  const pc1 = (await makeNode(s, pid, { name: "PC1", node_type: "vpcs" })).node_id;
  const pc2 = (await makeNode(s, pid, { name: "PC2", node_type: "vpcs" })).node_id;
  const sw = (await makeNode(s, pid, { name: "SW1", node_type: "ethernet_switch" })).node_id;
  const hub = (await makeNode(s, pid, { name: "HUB1", node_type: "ethernet_hub" })).node_id;
  const mapping = { ports_mapping: [{ name: "eth0", port_number: 0, type: "ethernet", interface: "eth0" }] };
  const cloud1 = (await makeNode(s, pid, { name: "Cloud1", node_type: "cloud", properties: mapping })).node_id;
  const cloud2 = (await makeNode(s, pid, { name: "Cloud2", node_type: "cloud", properties: mapping })).node_id;
  let linkId = "";
  let link2Id = "";
  if (links) {
    const first = await call(s.url, "POST", `${P}/links`, { nodes: [end(pc1), end(sw)] });
    expect(first.status).toBe(201);
    linkId = first.body.link_id;
    const second = await call(s.url, "POST", `${P}/links`, { nodes: [end(pc2, 0, { label: { text: "my-label", x: 10, y: 10 } }), end(sw, 1)] });
    expect(second.status).toBe(201);
    link2Id = second.body.link_id;
  }
  return { pid, P, pc1, pc2, sw, hub, cloud1, cloud2, linkId, link2Id };
}

describe("emulation: links (REST)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it("creates a link between two ports with default labels", async () => {
    const { pid, P, pc1, sw } = await topology(s, { links: false });
    const r = await call(s.url, "POST", `${P}/links`, { nodes: [end(pc1), end(sw)] });
    expect(r.status).toBe(201);
    const linkId = r.body.link_id;
    expect(r.body).toEqual({
      capture_compute_id: null,
      capture_file_name: null,
      capture_file_path: null,
      capturing: false,
      filters: {},
      link_id: linkId,
      link_style: {},
      link_type: "ethernet",
      nodes: [
        { adapter_number: 0, label: { style: STYLE, text: "0/0" }, node_id: pc1, port_number: 0 },
        { adapter_number: 0, label: { style: STYLE, text: "0/0" }, node_id: sw, port_number: 0 },
      ],
      project_id: pid,
      suspend: false,
    });
  });

  it("keeps a client label as sent", async () => {
    const { P, pc2, sw } = await topology(s, { links: false });
    const r = await call(s.url, "POST", `${P}/links`, { nodes: [end(pc2, 0, { label: { text: "my-label", x: 10, y: 10 } }), end(sw, 1)] });
    expect(r.body.nodes[0].label).toEqual({ text: "my-label", x: 10, y: 10 });
    expect(r.body.nodes[1].label).toEqual({ style: STYLE, text: "0/1" });
  });

  it("refuses a used port, a self link, a missing port, an unknown node, cloud to cloud", async () => {
    const { P, pc1, sw, hub, cloud1, cloud2 } = await topology(s);
    const used = await call(s.url, "POST", `${P}/links`, { nodes: [end(pc1), end(hub)] });
    expect(used).toMatchObject({ status: 409, body: { message: "Port is already used", status: 409 } });
    const self = await call(s.url, "POST", `${P}/links`, { nodes: [end(sw, 5), end(sw, 6)] });
    expect(self.body).toEqual({ message: "Cannot connect to itself", status: 409 });
    const port = await call(s.url, "POST", `${P}/links`, { nodes: [end(sw, 99), end(hub)] });
    expect(port.body).toEqual({ message: "Port 0/99 for SW1 not found", status: 404 });
    const ghost = "eebb8677-79ab-4241-ae2b-e676d4c1fc2d";
    const node = await call(s.url, "POST", `${P}/links`, { nodes: [end(ghost), end(hub)] });
    expect(node.body).toEqual({ message: `Node ID ${ghost} doesn't exist`, status: 404 });
    const clouds = await call(s.url, "POST", `${P}/links`, { nodes: [end(cloud1), end(cloud2)] });
    expect(clouds.status).toBe(409);
    // Nothing half-built was left behind by the failures.
    expect((await call(s.url, "GET", `${P}/links`)).body).toHaveLength(2);
  });

  it("makes 'Port is already used' race-free under concurrent requests", async () => {
    const { P, sw, hub } = await topology(s);
    const results = await Promise.all([4, 5].map((port) => call(s.url, "POST", `${P}/links`, { nodes: [end(sw, 4), end(hub, port)] })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const loser = results.find((r) => r.status === 409)!;
    expect(loser.body.message).toBe("Port is already used");
    const winner = results.find((r) => r.status === 201)!;
    expect((await call(s.url, "DELETE", `${P}/links/${winner.body.link_id}`)).status).toBe(204);
  });

  it("rejects malformed bodies with the GNS3 400 shape", async () => {
    const { P, sw, hub } = await topology(s);
    const missing = await call(s.url, "POST", `${P}/links`, { nodes: [{ node_id: sw, port_number: 7 }, end(hub)] });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ method: "POST", path: "/v2/projects/{project_id}/links", status: 400 });
    expect(missing.body.message).toMatch(/'adapter_number' is a required property$/);
    expect((await call(s.url, "POST", `${P}/links`, { nodes: [], colour: 1 })).status).toBe(400);
    expect((await call(s.url, "POST", `${P}/links`, { suspend: "yes" })).status).toBe(400);
    expect((await call(s.url, "POST", `${P}/links`, { filters: { jitter: [1] } })).status).toBe(400);
    expect((await call(s.url, "POST", `${P}/links`, { filters: { packet_loss: [200] } })).status).toBe(400);
  });

  it("a single-node body gives 201 and a half link", async () => {
    const { P, sw } = await topology(s);
    const r = await call(s.url, "POST", `${P}/links`, { nodes: [end(sw, 7)] });
    expect(r.status).toBe(201);
    expect(r.body.nodes).toHaveLength(1);
    expect((await call(s.url, "DELETE", `${P}/links/${r.body.link_id}`)).status).toBe(204);
  });

  it("GET lists, GET one, GET N/links, 404 for an unknown link", async () => {
    const { P, pc1, sw, linkId } = await topology(s);
    const list = await call(s.url, "GET", `${P}/links`);
    expect(list.status).toBe(200);
    expect(list.body.map((l: any) => l.link_id)[0]).toBe(linkId);
    const one = await call(s.url, "GET", `${P}/links/${linkId}`);
    expect(one.body).toEqual(list.body[0]);
    const ofSwitch = await call(s.url, "GET", `${P}/nodes/${sw}/links`);
    expect(ofSwitch.body).toHaveLength(2);
    const ofPc1 = await call(s.url, "GET", `${P}/nodes/${pc1}/links`);
    expect(ofPc1.body.map((l: any) => l.link_id)).toEqual([linkId]);
    const ghost = "eebb8677-79ab-4241-ae2b-e676d4c1fc2d";
    const missing = { message: `Link ID ${ghost} doesn't exist`, status: 404 };
    expect((await call(s.url, "GET", `${P}/links/${ghost}`)).body).toEqual(missing);
    expect((await call(s.url, "PUT", `${P}/links/${ghost}`, { suspend: true })).body).toEqual(missing);
    expect((await call(s.url, "DELETE", `${P}/links/${ghost}`)).body).toEqual(missing);
    expect((await call(s.url, "GET", `${P}/links/${ghost}/available_filters`)).body).toEqual(missing);
    expect((await call(s.url, "GET", `${P}/nodes/${ghost}/links`)).body).toEqual({ message: `Node ID ${ghost} doesn't exist`, status: 404 });
    const other = "e01323a4-2775-4b53-8cc8-84e3dba6f74f";
    expect((await call(s.url, "GET", `/v2/projects/${other}/links`)).body).toEqual({ message: `Project ID ${other} doesn't exist`, status: 404 });
    expect((await call(s.url, "POST", `/v2/projects/${other}/links`, { nodes: [] })).status).toBe(404);
    // A PUT body is validated like a POST one.
    expect((await call(s.url, "PUT", `${P}/links/${linkId}`, { nodes: [{ node_id: pc1, adapter_number: "0", port_number: 0 }] })).status).toBe(400);
  });

  it("available_filters lists the five filters when an end can filter, none between builtins", async () => {
    const { P, sw, hub, linkId } = await topology(s);
    const r = await call(s.url, "GET", `${P}/links/${linkId}/available_filters`);
    expect(r.status).toBe(200);
    expect(r.body.map((f: any) => f.type)).toEqual(["frequency_drop", "packet_loss", "delay", "corrupt", "bpf"]);
    expect(r.body[2].parameters[1]).toEqual({ maximum: 32767, minimum: 0, name: "Jitter (-/+)", type: "int", unit: "ms" });
    const builtin = await call(s.url, "POST", `${P}/links`, { nodes: [end(sw, 3), end(hub, 3)] });
    expect((await call(s.url, "GET", `${P}/links/${builtin.body.link_id}/available_filters`)).body).toEqual([]);
    await call(s.url, "DELETE", `${P}/links/${builtin.body.link_id}`);
  });

  it("PUT applies filters (dropping disabled ones), style, suspend; 201; one link.updated per effective change", async () => {
    const { P, pc1, linkId } = await topology(s);
    const stream = ndjsonStream(`${s.url}${P}/notifications`);
    await stream.take(1);
    const r1 = await call(s.url, "PUT", `${P}/links/${linkId}`, {
      filters: { delay: [10, 2], packet_loss: [0] },
      link_style: { color: "#ff0000", width: 2, type: 1 },
    });
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({ filters: { delay: [10, 2] }, link_style: { color: "#ff0000", type: 1, width: 2 } });
    const r2 = await call(s.url, "PUT", `${P}/links/${linkId}`, { suspend: true });
    expect(r2.body).toMatchObject({ suspend: true, filters: { delay: [10, 2] } });
    const same = await call(s.url, "PUT", `${P}/links/${linkId}`, { suspend: true });
    expect(same.status).toBe(201);
    const r3 = await call(s.url, "PUT", `${P}/links/${linkId}`, { suspend: false, filters: {} });
    expect(r3.body).toMatchObject({ suspend: false, filters: {} });
    const r4 = await call(s.url, "PUT", `${P}/links/${linkId}`, { nodes: [end(pc1, 0, { label: { text: "uplink" } })] });
    expect(r4.body.nodes[0].label).toEqual({ text: "uplink" });
    expect(r4.body.nodes[1].label.text).toBe("0/0");
    const lines = (await stream.take(7)).slice(1).map((l) => JSON.parse(l));
    stream.close();
    expect(lines.map((l) => l.action)).toEqual(Array(6).fill("link.updated"));
    expect(lines.map((l) => [l.event.filters, l.event.link_style, l.event.suspend])).toEqual([
      [{ delay: [10, 2] }, {}, false],
      [{ delay: [10, 2] }, { color: "#ff0000", type: 1, width: 2 }, false],
      [{ delay: [10, 2] }, { color: "#ff0000", type: 1, width: 2 }, true],
      [{}, { color: "#ff0000", type: 1, width: 2 }, true],
      [{}, { color: "#ff0000", type: 1, width: 2 }, false],
      [{}, { color: "#ff0000", type: 1, width: 2 }, false],
    ]);
    expect(lines[5].event.nodes[0].label).toEqual({ text: "uplink" });
  });

  it("announces link.created only for complete links and nothing for a rejected one", async () => {
    const { P, pc1, sw, hub } = await topology(s);
    const stream = ndjsonStream(`${s.url}${P}/notifications`);
    await stream.take(1);
    const half = await call(s.url, "POST", `${P}/links`, { nodes: [end(hub, 6)] });
    await call(s.url, "POST", `${P}/links`, { nodes: [end(pc1), end(hub, 5)] }); // port in use
    const full = await call(s.url, "POST", `${P}/links`, { nodes: [end(hub, 7), end(sw, 7)] });
    await call(s.url, "DELETE", `${P}/links/${half.body.link_id}`);
    const lines = (await stream.take(3)).slice(1).map((l) => JSON.parse(l));
    stream.close();
    expect(lines).toEqual([
      { action: "link.created", event: full.body },
      { action: "link.deleted", event: half.body },
    ]);
  });

  it("deleting a node deletes its links first (link.deleted each, then node.deleted)", async () => {
    const { P, sw } = await topology(s);
    const stream = ndjsonStream(`${s.url}${P}/notifications`);
    await stream.take(1);
    const before = (await call(s.url, "GET", `${P}/nodes/${sw}/links`)).body;
    expect(before.length).toBeGreaterThan(1);
    expect((await call(s.url, "DELETE", `${P}/nodes/${sw}`)).status).toBe(204);
    const lines = (await stream.take(1 + before.length + 1)).slice(1).map((l) => JSON.parse(l));
    stream.close();
    expect(lines.slice(0, -1)).toEqual(before.map((l: any) => ({ action: "link.deleted", event: l })));
    expect(lines.at(-1)).toMatchObject({ action: "node.deleted", event: { node_id: sw, name: "SW1" } });
    for (const l of before) expect((await call(s.url, "GET", `${P}/links/${l.link_id}`)).status).toBe(404);
  });

  it("DELETE is 204 then 404; a closed project lists topology entries and refuses item routes", async () => {
    const { pid, P, pc1, sw, hub, linkId } = await topology(s);
    expect((await call(s.url, "DELETE", `${P}/nodes/${sw}`)).status).toBe(204);
    expect((await call(s.url, "DELETE", `${P}/links/${linkId}`)).status).toBe(404); // went with SW1
    const link = await call(s.url, "POST", `${P}/links`, { nodes: [end(pc1), end(hub, 0)] });
    await s.ctx.db.project.update({ where: { id: pid }, data: { status: "closed" } });
    const list = (await call(s.url, "GET", `${P}/links`)).body;
    expect(list).toContainEqual({ filters: {}, link_id: link.body.link_id, link_style: {}, nodes: link.body.nodes, suspend: false });
    const forbidden = { message: "The project is not opened", status: 403 };
    expect((await call(s.url, "GET", `${P}/links/${link.body.link_id}`)).body).toEqual(forbidden);
    expect((await call(s.url, "PUT", `${P}/links/${link.body.link_id}`, { suspend: true })).body).toEqual(forbidden);
    expect((await call(s.url, "DELETE", `${P}/links/${link.body.link_id}`)).body).toEqual(forbidden);
    expect((await call(s.url, "POST", `${P}/links`, { nodes: [] })).body).toEqual(forbidden);
    await s.ctx.db.project.update({ where: { id: pid }, data: { status: "opened" } });
    expect((await call(s.url, "DELETE", `${P}/links/${link.body.link_id}`)).status).toBe(204);
  });
});
