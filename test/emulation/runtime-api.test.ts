import { randomUUID } from "node:crypto";
import { projectTopic } from "../../src/emulation/core/events.js";
import { asGns3 } from "../support/gns3-events.js";
import dgram from "node:dgram";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findOwnedPids, isAlive } from "../../src/emulation/runtime/processes.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { followPcap, icmpEchoes } from "../support/lab.js";
import { step } from "../support/steps.js";
import { waitFor } from "../support/wait.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);


async function udpPortIsFree(port: number): Promise<boolean> {
  const s = dgram.createSocket("udp4");
  return new Promise((resolve) => {
    s.once("error", () => {
      s.close();
      resolve(false);
    });
    s.bind(port, "0.0.0.0", () => s.close(() => resolve(true)));
  });
}


describe("runtime REST without vpcs processes", () => {
  let s: TestServer;
  let P: string;
  beforeAll(async () => {
    s = await startTestServer();
    const id = randomUUID();
    await s.ctx.db.project.create({ data: { id, name: `p-${id.slice(0, 8)}`, filename: "p.gns3", autoClose: false } });
    P = `/v2/projects/${id}`;
  });
  afterAll(() => s?.close());

  it("refuses node types this host cannot run with a 409 naming what is missing", async () => {
    const q = await call(s.url, "POST", `${P}/nodes`, { name: "R1", node_type: "dynamips", compute_id: "local" });
    expect(q.status).toBe(201);
    const r = await call(s.url, "POST", `${P}/nodes/${q.body.node_id}/start`);
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/dynamips nodes are not supported.*Dynamips/);
    expect((await call(s.url, "POST", `${P}/nodes/${q.body.node_id}/stop`)).status).toBe(200);
    expect((await call(s.url, "POST", `${P}/nodes/start`)).status).toBe(409);
    await call(s.url, "DELETE", `${P}/nodes/${q.body.node_id}`);
  });

  it("a qemu node with neither platform nor qemu_path cannot start: 409 naming the binary it lacks, as GNS3", async () => {
    const q = await call(s.url, "POST", `${P}/nodes`, { name: "VM1", node_type: "qemu", compute_id: "local" });
    expect(q.status).toBe(201);
    const r = await call(s.url, "POST", `${P}/nodes/${q.body.node_id}/start`);
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/^QEMU binary path qemu-system-None is not found in the path/);
    await call(s.url, "DELETE", `${P}/nodes/${q.body.node_id}`);
  });

  it("GraphQL lifecycle and capture mutations return typed errors", async () => {
    const q = await call(s.url, "POST", `${P}/nodes`, { name: "R9", node_type: "iou", compute_id: "local" });
    const r = await gql(
      s.url,
      `mutation($n: ID!) { startNode(input: { id: $n }) {
        __typename ... on StartNodePayload { node { status } } ... on ConflictError { message } } }`,
      { n: q.body.node_id },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.startNode.__typename).toBe("ConflictError");
    expect(r.data.startNode.message).toMatch(/iou nodes are not supported.*IOU binary/);
    const nf = await gql(s.url, `mutation { stopCapture(input: { id: "nope" }) { __typename ... on NotFoundError { message } } }`);
    expect(nf.data.stopCapture).toEqual({ __typename: "NotFoundError", message: "Link ID nope doesn't exist" });
    const stop = await gql(
      s.url,
      `mutation($n: ID!) { stopNode(input: { id: $n }) { ... on StopNodePayload { node { nodeId status nodeType } } } }`,
      { n: q.body.node_id },
    );
    expect(stop.data.stopNode.node).toEqual({ nodeId: q.body.node_id, status: "STOPPED", nodeType: "IOU" });
    await call(s.url, "DELETE", `${P}/nodes/${q.body.node_id}`);
  });

  it("answers the dynamips idle-PC routes like a compute without them, and 404s unknown nodes", async () => {
    const pc = await call(s.url, "POST", `${P}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });
    const r = await call(s.url, "GET", `${P}/nodes/${pc.body.node_id}/dynamips/auto_idlepc`);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe(`GET /projects/${P.split("/")[3]}/vpcs/nodes/${pc.body.node_id}/auto_idlepc not found`);
    const g = await gql(s.url, `query($n: ID!) { dynamipsAutoIdlePc(id: $n) { __typename ... on Error { code } } }`, { n: pc.body.node_id });
    expect(g.data.dynamipsAutoIdlePc).toEqual({ __typename: "NotFoundError", code: "NOT_FOUND" }); // the same answer in GraphQL
    const u = await call(s.url, "POST", `${P}/nodes/00000000-0000-4000-8000-000000000000/start`);
    expect(u.status).toBe(404);
    expect(u.body.message).toBe("Node ID 00000000-0000-4000-8000-000000000000 doesn't exist");
    await call(s.url, "DELETE", `${P}/nodes/${pc.body.node_id}`);
  });

  it("capture: 409 without a running device, 400 on a bad data link type, 404 on an unknown link, 409 pcap when idle", async () => {
    const a = await call(s.url, "POST", `${P}/nodes`, { name: "A", node_type: "vpcs", compute_id: "local" });
    const b = await call(s.url, "POST", `${P}/nodes`, { name: "B", node_type: "vpcs", compute_id: "local" });
    const l = await call(s.url, "POST", `${P}/links`, {
      nodes: [
        { node_id: a.body.node_id, adapter_number: 0, port_number: 0 },
        { node_id: b.body.node_id, adapter_number: 0, port_number: 0 },
      ],
    });
    const L = `${P}/links/${l.body.link_id}`;
    const c = await call(s.url, "POST", `${L}/start_capture`, {});
    expect(c.status).toBe(409);
    expect(c.body.message).toBe("Cannot capture because there is no running device on this link");
    const bad = await call(s.url, "POST", `${L}/start_capture`, { data_link_type: "DLT_FOO" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/'DLT_FOO' is not one of/);
    expect((await call(s.url, "POST", `${P}/links/${randomUUID()}/start_capture`, {})).status).toBe(404);
    const pcap = await call(s.url, "GET", `${L}/pcap`);
    expect(pcap.status).toBe(409);
    expect(pcap.body.message).toBe("This link has no active packet capture");
    const stop = await call(s.url, "POST", `${L}/stop_capture`);
    expect(stop.status).toBe(201);
    expect(stop.body.capturing).toBe(false);
  });
});

/**
 * One story, one test: each step works on what the previous ones left (a capture started while the PCs were
 * stopped must hold the later ping; the clean-up checks run after captures and filters were used; shutdown
 * closes the server).
 */
describe.skipIf(!hasVpcs)("PC1 — switch — PC2 through the REST API (requires the vpcs package)", () => {
  let s: TestServer;
  let P: string;
  let projectId: string;
  const ids: Record<string, string> = {};
  const links: string[] = [];
  const events: { action: string; event: any }[] = [];
  let consoles: TelnetClient[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    projectId = randomUUID();
    await s.ctx.db.project.create({ data: { id: projectId, name: `lab-${projectId.slice(0, 8)}`, filename: "lab.gns3", autoClose: false } });
    P = `/v2/projects/${projectId}`;
    const sub = s.ctx.bus.subscribe(projectTopic(projectId));
    void (async () => {
      for await (const e of sub) events.push(asGns3(s.ctx, e));
    })();
    for (const [name, type] of [["PC1", "vpcs"], ["PC2", "vpcs"], ["SW1", "ethernet_switch"]]) {
      const r = await call(s.url, "POST", `${P}/nodes`, { name, node_type: type, compute_id: "local" });
      expect(r.status).toBe(201);
      ids[name] = r.body.node_id;
    }
    for (const [pc, port] of [["PC1", 0], ["PC2", 1]] as const) {
      const r = await call(s.url, "POST", `${P}/links`, {
        nodes: [
          { node_id: ids[pc], adapter_number: 0, port_number: 0 },
          { node_id: ids.SW1, adapter_number: 0, port_number: port },
        ],
      });
      expect(r.status).toBe(201);
      links.push(r.body.link_id);
    }
  }, 30_000);

  afterAll(async () => {
    consoles.forEach((c) => c.close());
    await s?.close();
  });

  it("the acceptance lab: capture, start, ping, link filters, clean-up, GraphQL lifecycle and shutdown, in that order", async () => {
    await step("starts a capture on a switch link while the PCs are still stopped (the switch is always running)", async () => {
      const r = await call(s.url, "POST", `${P}/links/${links[0]}/start_capture`, {});
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        capturing: true,
        capture_compute_id: "local",
        capture_file_name: "PC1_0-0_to_SW1_0-0.pcap",
        capture_file_path: `${s.dataDir}/projects/${projectId}/project-files/captures/PC1_0-0_to_SW1_0-0.pcap`,
      });
      expect(fs.existsSync(r.body.capture_file_path)).toBe(true);
      const again = await call(s.url, "POST", `${P}/links/${links[0]}/start_capture`, {});
      expect(again.status).toBe(409);
    });

    await step("starts vpcs nodes (single and bulk), persists and announces started", async () => {
      const r = await call(s.url, "POST", `${P}/nodes/${ids.PC1}/start`);
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("started");
      expect(r.body.command_line).toMatch(/vpcs -p \d+ -m 0 -i 1 -s \d+ -c \d+ -t 127\.0\.0\.1/);
      const bulk = await call(s.url, "POST", `${P}/nodes/start`);
      expect(bulk.status).toBe(204);
      expect(bulk.text).toBe("");
      const pc2 = await call(s.url, "GET", `${P}/nodes/${ids.PC2}`);
      expect(pc2.body.status).toBe("started");
      expect(pc2.body.command_line).toContain("-m 1");
      expect((await s.ctx.db.node.findUnique({ where: { id: ids.PC1 } }))!.status).toBe("started");
      expect(events.some((e) => e.action === "node.updated" && e.event.node_id === ids.PC1 && e.event.status === "started")).toBe(true);
      expect(findOwnedPids(s.ctx.services.emulation.runtime.owner).length).toBeGreaterThanOrEqual(2);
      const sw = await call(s.url, "POST", `${P}/nodes/${ids.SW1}/stop`);
      expect(sw.body.status).toBe("started");
    });

    await step("pings PC2 from PC1 over the telnet consoles; the pcap stream and file hold the ICMP echo request and reply", async () => {
      const pc1 = (await call(s.url, "GET", `${P}/nodes/${ids.PC1}`)).body;
      const pc2 = (await call(s.url, "GET", `${P}/nodes/${ids.PC2}`)).body;
      consoles = [await TelnetClient.connect(pc1.console), await TelnetClient.connect(pc2.console)];
      await consoles[0].waitFor(/VPCS> $/);
      await consoles[1].waitFor(/VPCS> $/);
      await consoles[0].run("ip 10.0.0.1/24");
      await consoles[1].run("ip 10.0.0.2/24");

      const stream = await followPcap(`${s.url}${P}/links/${links[0]}/pcap`);
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get("content-type")).toBe("application/vnd.tcpdump.pcap");

      const out = await consoles[0].run("ping 10.0.0.2 -c 3", 20_000);
      expect(out.match(/10\.0\.0\.2 icmp_seq=\d ttl=64/g)).toHaveLength(3);
      await waitFor(() => icmpEchoes(parsePcap(stream.bytes()).packets.map((p) => p.data)).some((e) => e.type === 0));
      await stream.stop();
      const streamed = parsePcap(stream.bytes());
      expect(streamed.linktype).toBe(1);

      const stop = await call(s.url, "POST", `${P}/links/${links[0]}/stop_capture`);
      expect(stop.status).toBe(201);
      expect(stop.body).toMatchObject({ capturing: false, capture_compute_id: null, capture_file_name: "PC1_0-0_to_SW1_0-0.pcap" });
      expect((await call(s.url, "GET", `${P}/links/${links[0]}/pcap`)).status).toBe(409);
      const echoes = icmpEchoes(parsePcap(fs.readFileSync(stop.body.capture_file_path)).packets.map((p) => p.data));
      expect(echoes).toContainEqual({ type: 8, src: "10.0.0.1", dst: "10.0.0.2" });
      expect(echoes).toContainEqual({ type: 0, src: "10.0.0.2", dst: "10.0.0.1" });
    });

    await step("link filters and suspend set through PUT act on the wire", async () => {
      const L = `${P}/links/${links[1]}`;
      expect((await call(s.url, "PUT", L, { filters: { packet_loss: [100] } })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 100));
      expect(await consoles[0].run("ping 10.0.0.2 -c 2", 20_000)).not.toMatch(/icmp_seq=\d ttl=/);
      await call(s.url, "PUT", L, { filters: {} });
      await new Promise((r) => setTimeout(r, 100));
      expect((await consoles[0].run("ping 10.0.0.2 -c 2", 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
      await call(s.url, "PUT", L, { suspend: true });
      await new Promise((r) => setTimeout(r, 100));
      expect(await consoles[0].run("ping 10.0.0.2 -c 2", 20_000)).not.toMatch(/icmp_seq=\d ttl=/);
      await call(s.url, "PUT", L, { suspend: false });
      await new Promise((r) => setTimeout(r, 100));
      expect((await consoles[0].run("ping 10.0.0.2 -c 2", 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
    });

    await step("stop, node delete and link delete leave no process and no bound UDP port behind", async () => {
      consoles.forEach((c) => c.close());
      const compute = s.ctx.services.emulation.runtime;
      const pids1 = compute.snapshot().processes.find((p) => p.nodeId === ids.PC1)!.pids;
      const stop = await call(s.url, "POST", `${P}/nodes/${ids.PC1}/stop`);
      expect(stop.body.status).toBe("stopped");
      expect(pids1.length).toBeGreaterThan(0);
      for (const pid of pids1) expect(isAlive(pid), `pid ${pid}`).toBe(false); // gone, or a zombie waiting for init
      expect(events.some((e) => e.action === "node.updated" && e.event.node_id === ids.PC1 && e.event.status === "stopped")).toBe(true);

      const pids2 = compute.snapshot().processes.find((p) => p.nodeId === ids.PC2)!.pids;
      expect((await call(s.url, "DELETE", `${P}/nodes/${ids.PC2}`)).status).toBe(204);
      await waitFor(() => pids2.every((pid) => !isAlive(pid)));
      await waitFor(() => compute.snapshot().links.length === 1);
      expect((await call(s.url, "DELETE", `${P}/links/${links[0]}`)).status).toBe(204);
      await waitFor(() => compute.snapshot().links.length === 0 && compute.snapshot().attachments.length === 0);
      const snap = compute.snapshot();
      expect(snap.processes).toEqual([]);
      expect(snap.devices).toEqual([]);
      expect(snap.udpPorts).toEqual([]);
      expect(findOwnedPids(compute.owner)).toEqual([]);
    });

    await step("GraphQL startNode / reloadNode / stopNode drive a real vpcs", async () => {
      const m = (name: string) =>
        gql(s.url, `mutation($n: ID!) { ${name}(input: { id: $n }) { __typename ... on ${name[0].toUpperCase()}${name.slice(1)}Payload { node { status commandLine console } } } }`, {
          n: ids.PC1,
        });
      const compute = s.ctx.services.emulation.runtime;
      const started = await m("startNode");
      expect(started.data.startNode.node.status).toBe("STARTED");
      expect(started.data.startNode.node.commandLine).toContain(`-p ${started.data.startNode.node.console}`);
      const before = compute.snapshot().processes.find((p) => p.nodeId === ids.PC1)!.pids;
      const reloaded = await m("reloadNode");
      expect(reloaded.data.reloadNode.node.status).toBe("STARTED");
      const after = compute.snapshot().processes.find((p) => p.nodeId === ids.PC1)!.pids;
      expect(after.some((p) => before.includes(p))).toBe(false);
      for (const p of before) expect(isAlive(p)).toBe(false);
      const stopped = await m("stopNode");
      expect(stopped.data.stopNode.node.status).toBe("STOPPED");
      for (const p of after) expect(isAlive(p)).toBe(false);
    });

    await step("server shutdown stops running nodes and frees their ports", async () => {
      const r = await call(s.url, "POST", `${P}/nodes/${ids.PC1}/start`);
      expect(r.body.status).toBe("started");
      const compute = s.ctx.services.emulation.runtime;
      const ports = compute.snapshot().udpPorts;
      expect(ports.length).toBeGreaterThan(0);
      await s.close();
      expect(findOwnedPids(compute.owner)).toEqual([]);
      for (const p of ports) expect(await udpPortIsFree(p), `UDP ${p}`).toBe(true);
    });
  }, 270_000);
});
