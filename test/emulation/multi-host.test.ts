import { randomUUID } from "node:crypto";
import { projectTopic } from "../../src/emulation/core/events.js";
import { asGns3 } from "../support/gns3-events.js";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { icmpEchoes } from "../support/lab.js";
import { step } from "../support/steps.js";
import { waitFor } from "../support/wait.js";
import { COMPUTE_HOST, CONTROLLER_HOST, computeInstance, twoHosts } from "../support/computes.js";
import { call, gql, graphqlWsClient, nodesOf, type TestServer } from "../support/server.js";
import { localNodeTypes, toolAvailable } from "../support/tools.js";

/**
 * One story, one test: each step works on what the previous ones left (the started lab, the compute killed and
 * then restarted on the same port, the project closed at the end).
 */
describe.skipIf(!toolAvailable("vpcs", findVpcs() !== null))("PC1 (local) — switch (local) — PC2 (remote compute) (requires vpcs)", () => {
  let ctl: TestServer;
  let cmp: TestServer;
  let compute: Awaited<ReturnType<typeof computeInstance>>;
  let P: string;
  let projectId: string;
  const ids: Record<string, string> = {};
  const links: string[] = [];
  let consoles: TelnetClient[] = [];
  const events: { action: string; event: any }[] = [];

  beforeAll(async () => {
    ({ ctl, cmp, compute } = await twoHosts());
    const p = await call(ctl.url, "POST", "/v2/projects", { name: `multi-${randomUUID().slice(0, 8)}` });
    expect(p.status).toBe(201);
    projectId = p.body.project_id;
    P = `/v2/projects/${projectId}`;
    const sub = ctl.ctx.bus.subscribe(projectTopic(projectId));
    void (async () => {
      for await (const e of sub) events.push(asGns3(ctl.ctx, e));
    })();
    for (const [name, type, computeId] of [["PC1", "vpcs", "local"], ["SW1", "ethernet_switch", "local"], ["PC2", "vpcs", "hostb"]]) {
      const r = await call(ctl.url, "POST", `${P}/nodes`, { name, node_type: type, compute_id: computeId });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      ids[name] = r.body.node_id;
    }
    for (const [pc, port] of [["PC1", 0], ["PC2", 1]] as const) {
      const r = await call(ctl.url, "POST", `${P}/links`, {
        nodes: [
          { node_id: ids[pc], adapter_number: 0, port_number: 0 },
          { node_id: ids.SW1, adapter_number: 0, port_number: port },
        ],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      links.push(r.body.link_id);
    }
  }, 40_000);

  afterAll(async () => {
    consoles.forEach((c) => c.close());
    await ctl?.close();
    await cmp?.close();
    await compute?.drop();
  });

  it("the cross-host lab: PC2 on the compute, start and ping, changes both ways, the compute killed and restarted, clean-up", async () => {
    await step("creates PC2 on the compute: its console is the compute's, and the compute API knows the node", async () => {
      const pc2 = (await call(ctl.url, "GET", `${P}/nodes/${ids.PC2}`)).body;
      expect(pc2).toMatchObject({ compute_id: "hostb", console_host: COMPUTE_HOST, status: "stopped" });
      expect(pc2.console).toBeGreaterThanOrEqual(compute.ranges.consolePorts[0]);
      expect(pc2.console).toBeLessThanOrEqual(compute.ranges.consolePorts[1]);
      const there = await call(cmp.url, "GET", `/v2/compute/projects/${projectId}/vpcs/nodes/${ids.PC2}`);
      expect(there.status).toBe(200);
      expect(there.body).toMatchObject({ node_id: ids.PC2, name: "PC2", console: pc2.console, status: "stopped" });
    });

    await step("starts the lab, pings across hosts over the telnet consoles and captures the ICMP echoes on the cross-host link", async () => {
      expect((await call(ctl.url, "POST", `${P}/nodes/start`)).status).toBe(204);
      const pc1 = (await call(ctl.url, "GET", `${P}/nodes/${ids.PC1}`)).body;
      const pc2 = (await call(ctl.url, "GET", `${P}/nodes/${ids.PC2}`)).body;
      expect(pc2.status).toBe("started");
      expect(pc2.command_line).toMatch(/vpcs -p \d+ -m 1 /); // the controller's MAC offset: the second vpcs of the project
      expect(events.some((e) => e.action === "node.updated" && e.event.node_id === ids.PC2 && e.event.status === "started")).toBe(true);

      const cap = await call(ctl.url, "POST", `${P}/links/${links[1]}/start_capture`, {});
      expect(cap.status, JSON.stringify(cap.body)).toBe(201);
      // The relay of a cross-host link runs on the controller: so does its live packet view.
      const client = graphqlWsClient(ctl);
      const live: any[] = [];
      client.subscribe(
        {
          query: `subscription($l: ID!) { linkPackets(id: $l) { ... on LinkPacket { ethernet { src } ipv4 { src dst } icmp { type } } } }`,
          variables: { l: links[1] },
        },
        { next: (v) => live.push((v.data as any).linkPackets), error: () => {}, complete: () => {} },
      );
      await waitFor(async () => /graphql:linkPackets"\} 1/.test(await (await fetch(`${ctl.url}/metrics`)).text()), 10_000, "the packet subscription");

      consoles = [await TelnetClient.connect(pc1.console, pc1.console_host), await TelnetClient.connect(pc2.console, pc2.console_host)];
      await consoles[0].waitFor(/VPCS> $/);
      await consoles[1].waitFor(/VPCS> $/);
      await consoles[0].run("ip 10.0.0.1/24");
      await consoles[1].run("ip 10.0.0.2/24");
      const out = await consoles[0].run("ping 10.0.0.2 -c 3", 20_000);
      expect(out.match(/10\.0\.0\.2 icmp_seq=\d ttl=64/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
      await waitFor(() => live.some((p) => p.icmp?.type === 0), 10_000, "a live echo reply");
      expect(live).toContainEqual({ ethernet: { src: "00:50:79:66:68:00" }, ipv4: { src: "10.0.0.1", dst: "10.0.0.2" }, icmp: { type: 8 } });
      expect(live).toContainEqual({ ethernet: { src: "00:50:79:66:68:01" }, ipv4: { src: "10.0.0.2", dst: "10.0.0.1" }, icmp: { type: 0 } });
      await client.dispose();

      const stop = await call(ctl.url, "POST", `${P}/links/${links[1]}/stop_capture`);
      expect(stop.status).toBe(201);
      const echoes = icmpEchoes(parsePcap(fs.readFileSync(stop.body.capture_file_path)).packets.map((p) => p.data));
      expect(echoes).toContainEqual({ type: 8, src: "10.0.0.1", dst: "10.0.0.2" });
      expect(echoes).toContainEqual({ type: 0, src: "10.0.0.2", dst: "10.0.0.1" });
    });

    await step("a change made on the compute reaches the controller's stream and GraphQL; a rename on the controller reaches the compute", async () => {
      const C = `/v2/compute/projects/${projectId}/vpcs/nodes/${ids.PC2}`;
      expect((await call(ctl.url, "GET", `${P}/nodes/${ids.PC2}`)).body.status).toBe("started");
      const from = events.length;
      expect((await call(cmp.url, "POST", `${C}/stop`)).status).toBe(204);
      const stopped = () => events.slice(from).some((e) => e.action === "node.updated" && e.event.node_id === ids.PC2 && e.event.status === "stopped");
      await waitFor(stopped, 5_000);
      const q = await gql(ctl.url, `query($id: ID!) { project(id: $id) { nodes { edges { node { name status } } } } }`, { id: projectId });
      expect(q.errors).toBeUndefined();
      expect(nodesOf(q.data.project.nodes).find((n: any) => n.name === "PC2").status).toMatch(/^stopped$/i);
      const renamed = await call(ctl.url, "PUT", `${P}/nodes/${ids.PC2}`, { name: "PC2b" });
      expect(renamed.status).toBe(200);
      await waitFor(async () => (await call(cmp.url, "GET", C)).body.name === "PC2b", 5_000);
      expect((await call(ctl.url, "POST", `${P}/nodes/${ids.PC2}/start`)).body.status).toBe("started");
    });

    await step("a property change on the controller reaches the compute running the node (a remote switch's ports_mapping)", async () => {
      const sw = await call(ctl.url, "POST", `${P}/nodes`, { name: "SWB", node_type: "ethernet_switch", compute_id: "hostb" });
      expect(sw.status, sw.text).toBe(201);
      const mapping = [
        { name: "Ethernet0", port_number: 0, type: "access", vlan: 10 },
        { name: "Ethernet1", port_number: 1, type: "dot1q", vlan: 1 },
      ];
      const put = await call(ctl.url, "PUT", `${P}/nodes/${sw.body.node_id}`, { properties: { ports_mapping: mapping } });
      expect(put.status, put.text).toBe(200);
      const C = `/v2/compute/projects/${projectId}/ethernet_switch/nodes/${sw.body.node_id}`;
      await waitFor(async () => JSON.stringify((await call(cmp.url, "GET", C)).body.ports_mapping) === JSON.stringify(mapping), 5_000);
      expect((await call(ctl.url, "DELETE", `${P}/nodes/${sw.body.node_id}`)).status).toBe(204);
    });

    await step("a killed compute is marked disconnected and its node stopped; the controller keeps answering", async () => {
      consoles.forEach((c) => c.close());
      consoles = [];
      await cmp.close();
      await waitFor(async () => (await call(ctl.url, "GET", "/v2/computes/hostb")).body.connected === false, 15_000);
      await waitFor(async () => (await call(ctl.url, "GET", `${P}/nodes/${ids.PC2}`)).body.status === "stopped", 10_000);
      expect(events.some((e) => e.action === "node.updated" && e.event.node_id === ids.PC2 && e.event.status === "stopped")).toBe(true);
      const nodes = await call(ctl.url, "GET", `${P}/nodes`);
      expect(nodes.status).toBe(200);
      expect(nodes.body.find((n: any) => n.node_id === ids.PC1).status).toBe("started");
      const refused = await call(ctl.url, "POST", `${P}/nodes/${ids.PC2}/start`);
      expect(refused.status).toBe(409);
    });

    await step("a compute restarted on the same port reconnects; its node can be started again and reaches PC1", async () => {
      const port = cmp.port;
      cmp = await compute.start(port);
      await waitFor(async () => (await call(ctl.url, "GET", "/v2/computes/hostb")).body.connected === true, 40_000);
      const r = await call(ctl.url, "POST", `${P}/nodes/${ids.PC2}/start`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.status).toBe("started");
      const pc2 = r.body;
      consoles = [await TelnetClient.connect(pc2.console, pc2.console_host)];
      await consoles[0].waitFor(/VPCS> $/);
      await consoles[0].run("ip 10.0.0.2/24");
      const out = await consoles[0].run("ping 10.0.0.1 -c 3", 20_000);
      expect(out).toMatch(/10\.0\.0\.1 icmp_seq=\d ttl=64/);
    });

    await step("deleting the cross-host link, the remote node and closing the project reach the compute", async () => {
      consoles.forEach((c) => c.close());
      consoles = [];
      const nios = () => cmp.ctx.services.emulation.runtime.snapshot().links.filter((id) => id.startsWith("nio:"));
      expect(nios()).toEqual([`nio:${ids.PC2}/0/0`]);
      expect((await call(ctl.url, "DELETE", `${P}/links/${links[1]}`)).status).toBe(204);
      await waitFor(() => nios().length === 0); // the cross-host link's NIO on the compute goes with the link
      const sw = await call(ctl.url, "POST", `${P}/nodes`, { name: "SW2", node_type: "ethernet_hub", compute_id: "hostb" });
      expect(sw.status).toBe(201);
      expect((await call(cmp.url, "GET", `/v2/compute/projects/${projectId}/ethernet_hub/nodes/${sw.body.node_id}`)).status).toBe(200);
      expect((await call(ctl.url, "DELETE", `${P}/nodes/${sw.body.node_id}`)).status).toBe(204);
      await waitFor(async () => (await call(cmp.url, "GET", `/v2/compute/projects/${projectId}/ethernet_hub/nodes/${sw.body.node_id}`)).status === 404);
      expect((await call(ctl.url, "POST", `${P}/close`)).status).toBe(204);
      await waitFor(async () => (await call(cmp.url, "GET", `/v2/compute/projects/${projectId}`)).status === 404);
      // The controller releases the project on its project.closed event, beside the placement's close on the compute.
      await waitFor(async () => (await ctl.ctx.db.node.findUnique({ where: { id: ids.PC2 } }))!.status === "stopped");
    });
  }, 270_000);
});

describe("compute mode, the compute node API and forwarding (no vpcs needed)", () => {
  let ctl: TestServer;
  let cmp: TestServer;
  let compute: Awaited<ReturnType<typeof computeInstance>>;
  const projectId = randomUUID();
  const C = `/v2/compute/projects/${projectId}`;

  beforeAll(async () => {
    ({ ctl, cmp, compute } = await twoHosts());
    expect((await call(cmp.url, "POST", "/v2/compute/projects", { name: "lab", project_id: projectId })).status).toBe(201);
  }, 30_000);

  afterAll(async () => {
    await ctl?.close();
    await cmp?.close();
    await compute?.drop();
  });

  it("compute mode refuses controller routes and GraphQL with 403 and serves the compute API", async () => {
    for (const [method, url] of [["GET", "/v2/projects"], ["POST", "/v2/computes"], ["GET", "/v2/templates"], ["POST", "/graphql"]]) {
      const r = await call(cmp.url, method, url, method === "POST" ? {} : undefined);
      expect(r.status, url).toBe(403);
      expect(r.body.message).toMatch(/compute mode/);
    }
    const ws = new WebSocket(`${cmp.url.replace("http", "ws")}/v2/notifications/ws`);
    ws.on("error", () => {});
    const status = await new Promise<number>((resolve) => ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0)).on("open", () => resolve(101)));
    ws.terminate();
    expect(status).toBe(403);
    expect((await call(cmp.url, "GET", "/v2/version")).status).toBe(200);
    expect((await call(cmp.url, "GET", "/v2/compute/capabilities")).body.node_types).toEqual(localNodeTypes());
  });

  it("node routes: 400s in the GNS3 shape, 404s for unknown projects and nodes, create/get/update/delete", async () => {
    const bad = await call(cmp.url, "POST", `${C}/vpcs/nodes`, { name: "X", console_type: "vnc" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, method: "POST", path: "/v2/compute/projects/{project_id}/vpcs/nodes", request: { name: "X", console_type: "vnc" } });
    expect(bad.body.message).toMatch(/'vnc' is not one of \['telnet', 'none'\]$/);
    const noName = await call(cmp.url, "POST", `${C}/ethernet_hub/nodes`, {});
    expect(noName.status).toBe(400);
    expect(noName.body.message).toMatch(/'name' is a required property$/);
    expect((await call(cmp.url, "POST", `/v2/compute/projects/${randomUUID()}/vpcs/nodes`, { name: "X" })).status).toBe(404);
    expect((await call(cmp.url, "POST", "/v2/compute/projects/not-a-uuid/vpcs/nodes", { name: "X" })).status).toBe(400);

    const pc = await call(cmp.url, "POST", `${C}/vpcs/nodes`, { name: "PC9", node_id: randomUUID() });
    expect(pc.status).toBe(201);
    expect(pc.body).toMatchObject({ name: "PC9", status: "stopped", console_type: "telnet", project_id: projectId });
    expect(pc.body.console).toBeGreaterThanOrEqual(compute.ranges.consolePorts[0]);
    const N = `${C}/vpcs/nodes/${pc.body.node_id}`;
    expect((await call(cmp.url, "GET", N)).body.node_id).toBe(pc.body.node_id);
    expect((await call(cmp.url, "GET", `${C}/ethernet_switch/nodes/${pc.body.node_id}`)).status).toBe(404);
    const unknown = await call(cmp.url, "GET", `${C}/vpcs/nodes/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/^Node ID .* doesn't exist$/);
    const renamed = await call(cmp.url, "PUT", N, { name: "PC10" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("PC10");
    expect((await call(cmp.url, "POST", `${N}/adapters/0/ports/0/nio`, { type: "nio_tap", lport: 1, rhost: "x", rport: 1 })).status).toBe(400);
    expect((await call(cmp.url, "POST", `${N}/adapters/1/ports/0/nio`, { type: "nio_udp", lport: 1, rhost: "127.0.0.1", rport: 1 })).status).toBe(409);
    expect((await call(cmp.url, "DELETE", N)).status).toBe(204);
    expect((await call(cmp.url, "GET", N)).status).toBe(404);
  });

  it("a switch on the compute forwards frames between two UDP NIOs, and a port capture records them", async () => {
    const dgram = await import("node:dgram");
    const sw = await call(cmp.url, "POST", `${C}/ethernet_switch/nodes`, { name: "SW9" });
    expect(sw.status).toBe(201);
    expect(sw.body.ports_mapping).toHaveLength(8);
    const N = `${C}/ethernet_switch/nodes/${sw.body.node_id}`;
    const peers = [dgram.createSocket("udp4"), dgram.createSocket("udp4")];
    await Promise.all(peers.map((s) => new Promise<void>((r) => s.bind(0, CONTROLLER_HOST, () => r()))));
    const lports: number[] = [];
    for (const [i, s] of peers.entries()) {
      const u = await call(cmp.url, "POST", `${C}/ports/udp`, {});
      expect(u.status).toBe(201);
      lports.push(u.body.udp_port);
      const nio = await call(cmp.url, "POST", `${N}/adapters/0/ports/${i}/nio`, { type: "nio_udp", lport: u.body.udp_port, rhost: CONTROLLER_HOST, rport: s.address().port });
      expect(nio.status, JSON.stringify(nio.body)).toBe(201);
    }
    const cap = await call(cmp.url, "POST", `${N}/adapters/0/ports/1/start_capture`, { capture_file_name: "sw9.pcap" });
    expect(cap.status).toBe(200);
    const got = new Promise<Buffer>((r) => peers[1].once("message", (m) => r(m)));
    const frame = Buffer.concat([Buffer.alloc(6, 0xff), Buffer.from("020000000001", "hex"), Buffer.from("0800", "hex"), Buffer.alloc(46, 7)]);
    peers[0].send(frame, lports[0], COMPUTE_HOST);
    expect((await got).equals(frame)).toBe(true);
    expect((await call(cmp.url, "POST", `${N}/adapters/0/ports/1/stop_capture`)).status).toBe(204);
    expect(parsePcap(fs.readFileSync(cap.body.pcap_file_path)).packets.map((p) => p.data)).toContainEqual(frame);
    expect((await call(cmp.url, "DELETE", `${N}/adapters/0/ports/0/nio`)).status).toBe(204);
    expect((await call(cmp.url, "GET", `${N}/adapters/0/ports/1/pcap`)).status).toBe(409);
    peers.forEach((s) => s.close());
  });

  it("forwards to the compute with the reference's error mapping", async () => {
    const F = "/v2/computes/hostb";
    const qemuDir = path.join(cmp.dataDir, "images", "QEMU");
    fs.mkdirSync(qemuDir, { recursive: true });
    fs.writeFileSync(path.join(qemuDir, "b.qcow2"), "bbbbbbbb");
    fs.writeFileSync(path.join(qemuDir, "a.qcow2"), "aaaaaaa"); // GNS3 lists no file under 7 bytes
    const images = await call(ctl.url, "GET", `${F}/qemu/images`);
    expect(images.status).toBe(200);
    expect(images.body).toEqual([
      { filename: "a.qcow2", path: "a.qcow2", md5sum: "5d793fc5b00a2348c3fb9ab59e5ca98a", filesize: 7 },
      { filename: "b.qcow2", path: "b.qcow2", md5sum: "810247419084c82d03809fc886fedaad", filesize: 8 },
    ]);
    const vpcs = await call(ctl.url, "GET", `${F}/vpcs/images`);
    expect(vpcs.status).toBe(404);
    expect(vpcs.body).toEqual({ message: "GET /vpcs/images not found", status: 404 });
    expect((await call(ctl.url, "GET", `${F}/qemu/nope`)).body).toEqual({ message: "GET /qemu/nope not found", status: 404 });
    // The compute's qemu host routes, through the controller: its binaries with their versions, and no KVM claimed
    // unless a real one answers (never on this CI host: /dev/kvm there is a nested layer that runs no guest).
    const binaries = await call(ctl.url, "GET", `${F}/qemu/binaries`);
    expect(binaries.status).toBe(200);
    for (const b of binaries.body) expect(b).toEqual({ path: expect.stringMatching(/\/qemu-(system-[\w-]+|kvm)$/), version: expect.stringMatching(/^\d+\.\d+/) });
    if (localNodeTypes().includes("qemu")) expect(binaries.body.map((b: { path: string }) => path.basename(b.path))).toContain("qemu-system-x86_64");
    expect((await call(ctl.url, "GET", `${F}/qemu/img-binaries`)).status).toBe(200);
    expect((await call(ctl.url, "GET", `${F}/qemu/capabilities`)).body).toHaveProperty("kvm");
    const ifaces = await call(ctl.url, "GET", `${F}/network/interfaces`);
    expect(ifaces.status).toBe(200);
    expect(ifaces.body).toContainEqual(expect.objectContaining({ id: "lo", name: "lo", ip_address: "127.0.0.1", special: true, type: "ethernet" }));

    // The compute's own routes are reachable through the forwarder: a conflict comes back as a 409 with its message.
    const nodeId = randomUUID();
    const created = await call(ctl.url, "POST", `${F}/projects/${projectId}/vpcs/nodes`, { name: "PCF", node_id: nodeId });
    expect(created.status).toBe(200);
    expect(created.body.node_id).toBe(nodeId);
    const again = await call(ctl.url, "POST", `${F}/projects/${projectId}/vpcs/nodes`, { name: "PCF", node_id: nodeId });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: `Node ID ${nodeId} already exists`, status: 409 });
    const bad = await call(ctl.url, "POST", `${F}/projects/${projectId}/vpcs/nodes`, { name: "PCF", console_type: "vnc" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^Bad request http:\/\/127\.0\.0\.2:\d+\/v2\/compute\/projects\/.*'vnc' is not one of/s);

    expect((await call(ctl.url, "GET", "/v2/computes/nope/qemu/images")).body).toEqual({ message: "Compute ID nope doesn't exist", status: 404 });
    // A compute that does not answer: 504.
    const gone = await call(ctl.url, "POST", "/v2/computes", { compute_id: "gone", protocol: "http", host: COMPUTE_HOST, port: 9 });
    expect(gone.status).toBe(201);
    const unreachable = await call(ctl.url, "GET", "/v2/computes/gone/qemu/images");
    expect(unreachable.status).toBe(504);
    expect(unreachable.body.message).toMatch(/^Cannot connect to compute 'http:\/\/127\.0\.0\.2:9'/);
  });
});
