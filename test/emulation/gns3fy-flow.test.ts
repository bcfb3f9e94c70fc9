import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { consoleAnswers } from "../support/lab.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";
import { hostNodesLab, hostNodesReady, projectContainers, testDockerImage, type HostNodesLab } from "./host-nodes-support.js";

/**
 * The HTTP calls of the Python client gns3fy 0.8 (gns3fy/gns3fy.py), in its order, and nothing else: it finds a
 * template by name in GET /templates, creates the node at (0, 0) from it and then PUTs the attributes the user
 * gave (name, x, y, compute_id); it links ports found by name in the nodes' `ports`, sending the project id and a
 * label with only the port name; start_nodes is the bulk start followed by a node list. Every answer it reads goes
 * through requests' .json(). Black box, real vpcs processes.
 */
class Gns3fyLike {
  constructor(private readonly base: string) {}

  private async req(method: string, path: string, body?: object) {
    const r = await call(this.base, method, `/v2${path}`, body);
    if (r.status >= 400) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
    if (r.text) expect(r.headers.get("content-type")).toBe("application/json");
    return r.body;
  }

  version = () => this.req("GET", "/version");
  templates = () => this.req("GET", "/templates");
  computePorts = (computeId: string) => this.req("GET", `/computes/${computeId}/ports`);
  createProject = (name: string) => this.req("POST", "/projects", { name });
  deleteProject = (pid: string) => this.req("DELETE", `/projects/${pid}`);
  nodes = (pid: string) => this.req("GET", `/projects/${pid}/nodes`);
  links = (pid: string) => this.req("GET", `/projects/${pid}/links`);

  /** Node(project_id, connector, template=…, name=…, x=…, y=…).create() */
  async createNode(pid: string, attrs: { template: string; name?: string; x: number; y: number }) {
    const t = (await this.templates()).find((t: any) => t.name === attrs.template);
    if (!t) throw new Error(`Template ${attrs.template} not found`);
    const created = await this.req("POST", `/projects/${pid}/templates/${t.template_id}`, { x: 0, y: 0, compute_id: "local" });
    const cached = { ...(attrs.name && { name: attrs.name }), compute_id: "local", x: attrs.x, y: attrs.y };
    return this.req("PUT", `/projects/${pid}/nodes/${created.node_id}`, cached);
  }

  /** Project.create_link(node_a, port_a, node_b, port_b) */
  async createLink(pid: string, nodeA: string, portA: string, nodeB: string, portB: string) {
    const nodes = await this.nodes(pid);
    const end = (nodeName: string, portName: string) => {
      const n = nodes.find((n: any) => n.name === nodeName);
      const p = n.ports.find((p: any) => p.name === portName);
      return { node_id: n.node_id, adapter_number: p.adapter_number, port_number: p.port_number, label: { text: p.name } };
    };
    return this.req("POST", `/projects/${pid}/links`, { project_id: pid, nodes: [end(nodeA, portA), end(nodeB, portB)] });
  }

  /** Project.start_nodes(): the bulk start, then the node list (gns3fy sleeps poll_wait_time in between). */
  async startNodes(pid: string) {
    await this.req("POST", `/projects/${pid}/nodes/start`);
    return this.nodes(pid);
  }

  /** Gns3Connector.create_template(**kwargs): looks the name up in GET /templates first, compute_id "local" by default. */
  async createTemplate(kwargs: Record<string, unknown>) {
    if ((await this.templates()).some((t: any) => t.name === kwargs.name)) throw new Error(`Template already used: ${kwargs.name}`);
    return this.req("POST", "/templates", { compute_id: "local", ...kwargs });
  }

  /** Project.stop_nodes(): the bulk stop, then the node list. */
  async stopNodes(pid: string) {
    await this.req("POST", `/projects/${pid}/nodes/stop`);
    return this.nodes(pid);
  }

  deleteTemplate = (tid: string) => this.req("DELETE", `/templates/${tid}`);
  computeImages = (emulator: string) => this.req("GET", `/computes/local/${emulator}/images`);
  nodeAction = (pid: string, nid: string, action: "start" | "stop") => this.req("POST", `/projects/${pid}/nodes/${nid}/${action}`);
  deleteNode = (pid: string, nid: string) => this.req("DELETE", `/projects/${pid}/nodes/${nid}`);
}

describe.skipIf(!toolAvailable("vpcs", findVpcs() !== null))("a gns3fy-style client builds and runs a lab (requires the vpcs package)", () => {
  let s: TestServer;
  let api: Gns3fyLike;
  beforeAll(async () => {
    s = await startTestServer();
    api = new Gns3fyLike(s.url);
  });
  afterAll(() => s.close());

  it("templates → nodes from templates → links → start → stop → delete", async () => {
    expect(await api.version()).toMatchObject({ version: "2.2.59" });
    expect((await api.templates()).map((t: any) => t.name)).toEqual(expect.arrayContaining(["VPCS", "Ethernet switch", "Ethernet hub"]));
    const project = await api.createProject("gns3fy-lab");
    const pid = project.project_id;

    const pc1 = await api.createNode(pid, { template: "VPCS", x: -200, y: 0 });
    const pc2 = await api.createNode(pid, { template: "VPCS", name: "PC-B", x: 200, y: 0 });
    const sw = await api.createNode(pid, { template: "Ethernet switch", x: 0, y: -100 });
    expect([pc1.name, pc2.name, sw.name]).toEqual(["PC1", "PC-B", "Switch1"]);
    expect([pc2.x, pc2.y, pc2.template_id]).toEqual([200, 0, "19021f99-e36f-394d-b4a1-8aaa902ab9cc"]);

    const l1 = await api.createLink(pid, "PC1", "Ethernet0", "Switch1", "Ethernet0");
    const l2 = await api.createLink(pid, "PC-B", "Ethernet0", "Switch1", "Ethernet1");
    expect((await api.links(pid)).map((l: any) => l.link_id)).toEqual([l1.link_id, l2.link_id]);
    expect(l1.nodes.map((e: any) => e.label.text)).toEqual(["Ethernet0", "Ethernet0"]);

    const ports = await api.computePorts("local");
    expect(ports.console_ports).toEqual(expect.arrayContaining([pc1.console, pc2.console]));

    let nodes = await api.startNodes(pid);
    const deadline = Date.now() + 5000;
    while (nodes.some((n: any) => n.status !== "started") && Date.now() < deadline) nodes = await api.nodes(pid);
    expect(nodes.map((n: any) => [n.name, n.status])).toEqual([
      ["PC1", "started"],
      ["PC-B", "started"],
      ["Switch1", "started"],
    ]);
    for (const pc of [pc1, pc2]) expect(await consoleAnswers(pc.console)).toBe(true);

    for (const pc of [pc1, pc2]) expect((await api.nodeAction(pid, pc.node_id, "stop")).status).toBe("stopped");
    for (const n of [pc1, pc2, sw]) await api.deleteNode(pid, n.node_id);
    expect(await api.nodes(pid)).toEqual([]);
    expect(await api.links(pid)).toEqual([]);
    await api.deleteProject(pid);
  });
});

/** gns3fy's pydantic models refuse a node or link outside these (gns3fy.py NODE_TYPES, CONSOLE_TYPES, LINK_TYPES). */
const NODE_TYPES = ["cloud", "nat", "ethernet_hub", "ethernet_switch", "frame_relay_switch", "atm_switch", "docker", "dynamips", "vpcs", "traceng",
  "virtualbox", "vmware", "iou", "qemu"];
const CONSOLE_TYPES = ["vnc", "telnet", "http", "https", "spice", "spice+agent", "none", "null"];
const gns3fyAccepts = (n: any) => {
  expect(NODE_TYPES).toContain(n.node_type);
  if (n.console_type !== null) expect(CONSOLE_TYPES).toContain(n.console_type);
  for (const p of n.ports) expect(p).toMatchObject({ name: expect.any(String), adapter_number: expect.any(Number), port_number: expect.any(Number) });
};

/**
 * Issue 21 through gns3fy: Cloud and NAT from the built-in templates found by name, a docker template made with
 * create_template and used by its name, each linked to a switch by port names read from `ports` (the cloud's port
 * is the host interface's name, the NAT's "nat0", the container's "eth0"), start_nodes, per-node stop/start,
 * stop_nodes and the statuses in the node lists. Real host networking and dockerd.
 */
const hostReady = hostNodesReady();
const IMAGE = hostReady ? testDockerImage() : "patchbay-busybox:latest";

describe.skipIf(!hostReady)("a gns3fy-style client builds a Cloud, NAT and Docker lab (requires root, dockerd, socat, dnsmasq, nftables)", () => {
  let lab: HostNodesLab;
  let api: Gns3fyLike;
  beforeAll(async () => {
    lab = await hostNodesLab("pbf");
    api = new Gns3fyLike(lab.server.url);
  });
  afterAll(async () => {
    await lab?.release();
  });

  it("templates by name → nodes at (0, 0) + PUT → links by port name → start_nodes → stop → stop_nodes → delete", async () => {
    const templateName = `busybox-${randomUUID().slice(0, 6)}`;
    expect(await api.computeImages("docker")).toContainEqual({ image: IMAGE });
    const template = await api.createTemplate({ name: templateName, template_type: "docker", image: IMAGE, console_type: "telnet" });
    expect(template).toMatchObject({ name: templateName, template_type: "docker", compute_id: "local", builtin: false, image: IMAGE });
    expect((await api.templates()).map((t: any) => t.name)).toEqual(expect.arrayContaining(["Cloud", "NAT", templateName]));

    const pid = (await api.createProject(`gns3fy-host-${randomUUID().slice(0, 6)}`)).project_id;
    const sw = await api.createNode(pid, { template: "Ethernet switch", x: 0, y: -150 });
    const cloud = await api.createNode(pid, { template: "Cloud", name: "Internet", x: -200, y: 0 });
    const nat = await api.createNode(pid, { template: "NAT", x: 200, y: 0 });
    const dk = await api.createNode(pid, { template: templateName, name: "web", x: 0, y: 150 });
    for (const n of [sw, cloud, nat, dk]) gns3fyAccepts(n);
    expect([sw.name, cloud.name, nat.name, dk.name]).toEqual(["Switch1", "Internet", "NAT1", "web"]);
    expect([cloud.x, cloud.y, cloud.node_type, cloud.template_id]).toEqual([-200, 0, "cloud", "39e257dc-8412-3174-b6b3-0ee3ed6a43e9"]);
    expect([nat.x, nat.y, nat.node_type, nat.template_id]).toEqual([200, 0, "nat", "df8f4ea9-33b7-3e96-86a2-c39bc9bb649c"]);
    expect([dk.x, dk.y, dk.node_type, dk.template_id, dk.status]).toEqual([0, 150, "docker", template.template_id, "stopped"]);
    // The PUT renamed the container's node: one container for it.
    await waitFor(async () => (await projectContainers(pid)).length === 1, 15_000, "one container");

    const links = [
      await api.createLink(pid, "Internet", lab.cloudInterface, "Switch1", "Ethernet0"),
      await api.createLink(pid, "NAT1", "nat0", "Switch1", "Ethernet1"),
      await api.createLink(pid, "web", "eth0", "Switch1", "Ethernet2"),
    ];
    for (const l of links) expect(["ethernet", "serial"]).toContain(l.link_type);
    expect(links.map((l: any) => l.nodes.map((e: any) => e.label.text))).toEqual([[lab.cloudInterface, "Ethernet0"], ["nat0", "Ethernet1"], ["eth0", "Ethernet2"]]);
    expect((await api.links(pid)).map((l: any) => l.link_id)).toEqual(links.map((l: any) => l.link_id));

    const statuses = (nodes: any[]) => Object.fromEntries(nodes.map((n: any) => [n.name, n.status]));
    const poll = async (nodes: any[], want: Record<string, string>) => {
      const deadline = Date.now() + 20_000;
      while (JSON.stringify(statuses(nodes)) !== JSON.stringify(want) && Date.now() < deadline) nodes = await api.nodes(pid);
      return statuses(nodes);
    };
    const allStarted = { Switch1: "started", Internet: "started", NAT1: "started", web: "started" };
    const dockerStopped = { ...allStarted, web: "stopped" };
    expect(await poll(await api.startNodes(pid), allStarted)).toEqual(allStarted);
    expect((await projectContainers(pid)).map((c) => c.State)).toEqual(["running"]);

    // Node.stop() / Node.start() on the cloud and the NAT: the answer is the node (gns3fy updates itself from it), and
    // they keep running as in GNS3. (The container's own stop is left to stop_nodes: a docker stop waits GNS3's 5 s
    // for the busybox shell, which ignores SIGTERM; the GUI test covers the per-node docker stop.)
    for (const n of [cloud, nat]) expect((await api.nodeAction(pid, n.node_id, "stop")).status).toBe("started");
    for (const n of [cloud, nat]) gns3fyAccepts(await api.nodeAction(pid, n.node_id, "start"));
    expect(await poll(await api.nodes(pid), allStarted)).toEqual(allStarted);

    expect(await poll(await api.stopNodes(pid), dockerStopped)).toEqual(dockerStopped);
    expect((await projectContainers(pid)).map((c) => c.State)).toEqual(["exited"]);

    for (const n of [dk, nat, cloud, sw]) await api.deleteNode(pid, n.node_id);
    expect(await api.nodes(pid)).toEqual([]);
    expect(await api.links(pid)).toEqual([]);
    // The runtime removes the container when it follows node.deleted, a moment after the 204.
    await waitFor(async () => (await projectContainers(pid)).length === 0, 15_000, "the container to go");
    await api.deleteTemplate(template.template_id);
    await api.deleteProject(pid);
  }, 120_000);
});
