import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { consoleAnswers } from "../support/lab.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

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
