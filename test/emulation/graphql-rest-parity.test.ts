import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { COMPUTE_HOST, CONTROLLER_HOST, registerCompute } from "../support/computes.js";

/**
 * The GraphQL operations that reach what only REST reached before (the README's REST → GraphQL table), driven
 * over HTTP against the real server: each succeeds as its REST route does and fails with the same rule, as a
 * typed error result.
 */

/** One root field of a GraphQL answer: its result type name and either its data (a query's) or payload fields, or its error message. */
async function field(s: TestServer, name: string, document: string, variables: Record<string, unknown> = {}) {
  const r = await gql(s.url, document, variables);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data[name] as { __typename: string; data?: any; message?: string } & Record<string, any>;
}
const RESULT = `__typename ... on Error { message }`;
const success = (name: string) => `Query${name[0].toUpperCase()}${name.slice(1)}Success`;

async function restProject(s: TestServer, name: string) {
  const p = await call(s.url, "POST", "/v2/projects", { name });
  expect(p.status).toBe(201);
  return p.body as { project_id: string; path: string; filename: string };
}
async function restNode(s: TestServer, projectId: string, body: Record<string, unknown>) {
  const n = await call(s.url, "POST", `/v2/projects/${projectId}/nodes`, { compute_id: "local", ...body });
  expect(n.status, n.text).toBe(201);
  return n.body as { node_id: string; name: string };
}
async function restLink(s: TestServer, projectId: string, a: string, b: string, bPort = 0) {
  const ends = [a, b].map((node_id, i) => ({ node_id, adapter_number: 0, port_number: i ? bPort : 0 }));
  const l = await call(s.url, "POST", `/v2/projects/${projectId}/links`, { nodes: ends });
  expect(l.status, l.text).toBe(201);
  return l.body as { link_id: string };
}

describe("GraphQL parity: server, projects, nodes, links, symbols, computes (local server)", () => {
  let s: TestServer;
  let root: string; // a directory local mode may put projects in (--allowed-roots)
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-roots-"));
    s = await startTestServer({ local: true, allowedRoots: [root] });
  });
  afterAll(() => s?.close());

  it("emulationServer and checkEmulationVersion answer as GET and POST /v2/version", async () => {
    const r = await gql(s.url, `{ emulationServer { version local } }`);
    expect(r.data.emulationServer).toEqual({ version: "2.2.59", local: true });
    const same = await field(s, "checkEmulationVersion", `query($v: String!) { checkEmulationVersion(version: $v) { ${RESULT} ... on QueryCheckEmulationVersionSuccess { data } } }`, { v: "2.2.59" });
    expect(same).toEqual({ __typename: success("checkEmulationVersion"), data: "2.2.59" });
    const other = await field(s, "checkEmulationVersion", `{ checkEmulationVersion(version: "2.2.0") { ${RESULT} } }`);
    const rest = await call(s.url, "POST", "/v2/version", { version: "2.2.0" });
    expect(other).toEqual({ __typename: "ConflictError", message: rest.body.message });
  });

  it("writeDebugBundle writes the same bundle as POST /v2/debug", async () => {
    const r = await field(s, "writeDebugBundle", `mutation { writeDebugBundle { ${RESULT} ... on WriteDebugBundlePayload { path } } }`);
    expect(r).toEqual({ __typename: "WriteDebugBundlePayload", path: path.join(s.dataDir, "debug", "controller.txt") });
    expect(fs.readFileSync(r.path, "utf8")).toContain('"version": "2.2.59"');
  });

  it("loadProject opens a .gns3 file as POST /v2/projects/load does; a path outside the roots is a ForbiddenError", async () => {
    const p = await restProject(s, "gql-load");
    expect((await call(s.url, "POST", `/v2/projects/${p.project_id}/close`)).status).toBe(204);
    const LOAD = `mutation($path: String!) { loadProject(input: { path: $path }) { ${RESULT} ... on LoadProjectPayload { project { projectId name status } } } }`;
    const loaded = await field(s, "loadProject", LOAD, { path: path.join(p.path, p.filename) });
    expect(loaded.project).toEqual({ projectId: p.project_id, name: "gql-load", status: "OPENED" });
    const outside = await field(s, "loadProject", LOAD, { path: "/etc/hostname" });
    expect(outside).toEqual({ __typename: "ForbiddenError", message: "The path is not allowed" });
  });

  it("createProject and duplicateProject take a project directory as POST /v2/projects and …/duplicate do", async () => {
    const CREATE = `mutation($name: String!, $path: String) { createProject(input: { name: $name, path: $path }) {
      ${RESULT} ... on CreateProjectPayload { project { id path } } } }`;
    const created = await field(s, "createProject", CREATE, { name: "gql-at-path", path: path.join(root, "lab") });
    expect(created.project.path).toBe(path.join(root, "lab"));
    expect(fs.existsSync(path.join(root, "lab", "gql-at-path.gns3"))).toBe(true);
    expect(await field(s, "createProject", CREATE, { name: "gql-elsewhere", path: "/etc/gql-elsewhere" })).toEqual({ __typename: "ForbiddenError", message: "The path is not allowed" });
    const DUP = `mutation($id: ID!, $path: String) { duplicateProject(input: { id: $id, name: "gql-copy", path: $path }) {
      ${RESULT} ... on DuplicateProjectPayload { project { path } } } }`;
    expect((await field(s, "duplicateProject", DUP, { id: created.project.id, path: path.join(root, "copy") })).project.path).toBe(path.join(root, "copy"));
  });

  it("Project.stats counts as GET /v2/projects/{id}/stats, zero topology while closed", async () => {
    const p = await restProject(s, "gql-stats");
    const hub = await restNode(s, p.project_id, { name: "Hub1", node_type: "ethernet_hub" });
    const pc = await restNode(s, p.project_id, { name: "PC1", node_type: "vpcs" });
    await restLink(s, p.project_id, hub.node_id, pc.node_id);
    const STATS = `query($id: ID!) { project(id: $id) { stats { nodes links drawings snapshots } } }`;
    const opened = await gql(s.url, STATS, { id: p.project_id });
    expect(opened.data.project.stats).toEqual({ nodes: 2, links: 1, drawings: 0, snapshots: 0 });
    expect(opened.data.project.stats).toEqual((await call(s.url, "GET", `/v2/projects/${p.project_id}/stats`)).body);
    await call(s.url, "POST", `/v2/projects/${p.project_id}/close`);
    expect((await gql(s.url, STATS, { id: p.project_id })).data.project.stats).toEqual({ nodes: 0, links: 0, drawings: 0, snapshots: 0 });
  });

  it("duplicateNode, the console resets, EmulatedNode.links and Link.availableFilters act as their REST routes", async () => {
    const p = await restProject(s, "gql-nodes");
    const P = p.project_id;
    const pc = await restNode(s, P, { name: "PC1", node_type: "vpcs" });
    const hub = await restNode(s, P, { name: "Hub1", node_type: "ethernet_hub" });
    const hub2 = await restNode(s, P, { name: "Hub2", node_type: "ethernet_hub" });
    const filtered = await restLink(s, P, pc.node_id, hub.node_id);
    const plain = await restLink(s, P, hub2.node_id, hub.node_id, 1);

    const DUP = `mutation($id: ID!) { duplicateNode(input: { id: $id, x: 50, y: 60 }) {
      ${RESULT} ... on DuplicateNodePayload { node { nodeId name nodeType x y } } } }`;
    const copy = await field(s, "duplicateNode", DUP, { id: pc.node_id });
    expect(copy.node).toMatchObject({ name: "PC2", nodeType: "VPCS", x: 50, y: 60 });
    expect((await call(s.url, "GET", `/v2/projects/${P}/nodes/${copy.node.nodeId}`)).body.name).toBe("PC2");
    expect(await field(s, "duplicateNode", DUP, { id: randomUUID() })).toMatchObject({ __typename: "NotFoundError" });

    const RESET_ONE = `mutation($id: ID!) { resetNodeConsole(input: { id: $id }) { ${RESULT} ... on ResetNodeConsolePayload { node { nodeId } } } }`;
    expect((await field(s, "resetNodeConsole", RESET_ONE, { id: pc.node_id })).node).toEqual({ nodeId: pc.node_id });
    const unknown = randomUUID();
    expect(await field(s, "resetNodeConsole", RESET_ONE, { id: unknown })).toEqual({ __typename: "NotFoundError", message: `Node ID ${unknown} doesn't exist` });

    const LINKS = `query($id: ID!) { emulatedNode(id: $id) { ... on EmulatedNode {
      links { linkId availableFilters { type name parameters { name type minimum maximum unit } } } } } }`;
    const hubLinks = (await gql(s.url, LINKS, { id: hub.node_id })).data.emulatedNode.links;
    expect(hubLinks.map((l: { linkId: string }) => l.linkId)).toEqual([filtered.link_id, plain.link_id]);
    const restFilters = (await call(s.url, "GET", `/v2/projects/${P}/links/${filtered.link_id}/available_filters`)).body;
    expect(hubLinks[0].availableFilters.map((f: { type: string }) => f.type)).toEqual(restFilters.map((f: { type: string }) => f.type));
    expect(hubLinks[0].availableFilters[0].parameters[0]).toEqual({ ...restFilters[0].parameters[0], minimum: -1, maximum: 32767 });
    expect(hubLinks[1].availableFilters).toEqual([]); // two hubs: nothing filters

    const RESET_ALL = `mutation($p: ID!) { resetProjectConsoles(input: { projectId: $p }) { ${RESULT} ... on ResetProjectConsolesPayload { project { projectId } } } }`;
    expect((await field(s, "resetProjectConsoles", RESET_ALL, { p: P })).project).toEqual({ projectId: P });
    await call(s.url, "POST", `/v2/projects/${P}/close`);
    expect(await field(s, "resetProjectConsoles", RESET_ALL, { p: P })).toEqual({ __typename: "ForbiddenError", message: "The project is not opened" });
  });

  it("createLink takes the link id a client chooses, as POST …/links takes link_id", async () => {
    const p = await restProject(s, "gql-link-id");
    const [a, b] = [await restNode(s, p.project_id, { name: "HubA", node_type: "ethernet_hub" }), await restNode(s, p.project_id, { name: "HubB", node_type: "ethernet_hub" })];
    const LINK = `mutation($p: ID!, $id: ID, $a: ID!, $b: ID!) { createLink(input: { projectId: $p, id: $id,
      ends: [{ nodeId: $a, adapterNumber: 0, portNumber: 0 }, { nodeId: $b, adapterNumber: 0, portNumber: 0 }] }) {
      ${RESULT} ... on CreateLinkPayload { link { linkId } } } }`;
    const id = randomUUID();
    expect((await field(s, "createLink", LINK, { p: p.project_id, id, a: a.node_id, b: b.node_id })).link).toEqual({ linkId: id });
    expect((await call(s.url, "GET", `/v2/projects/${p.project_id}/links/${id}`)).status).toBe(200);
    expect(await field(s, "createLink", LINK, { p: p.project_id, id: "not-a-uuid", a: a.node_id, b: b.node_id })).toMatchObject({ __typename: "InvalidInputError" });
  });

  it("the Dynamips idle-PC queries refuse as their REST routes do", async () => {
    const p = await restProject(s, "gql-idlepc");
    const hub = await restNode(s, p.project_id, { name: "Hub1", node_type: "ethernet_hub" });
    for (const [name, route] of [["dynamipsAutoIdlePc", "auto_idlepc"], ["dynamipsIdlePcProposals", "idlepc_proposals"]]) {
      const r = await field(s, name, `query($n: ID!) { ${name}(id: $n) { ${RESULT} } }`, { n: hub.node_id });
      const rest = await call(s.url, "GET", `/v2/projects/${p.project_id}/nodes/${hub.node_id}/dynamips/${route}`);
      expect(rest.status).toBe(404);
      expect(r).toEqual({ __typename: "NotFoundError", message: rest.body.message });
    }
  });

  it("symbolDimensions, appliances, computeStatistics and computePorts answer as their REST routes", async () => {
    const symbol = (await call(s.url, "GET", "/v2/symbols")).body.find((x: { symbol_id: string }) => x.symbol_id.endsWith(".svg")).symbol_id;
    const DIM = `query($id: ID!) { symbolDimensions(id: $id) { ${RESULT} ... on SymbolSize { widthPixels heightPixels } } }`;
    /** REST's dimensions under the GraphQL names, which carry the unit. */
    const inPixels = ({ width, height }: { width: number; height: number }) => ({ widthPixels: width, heightPixels: height });
    const dims = await field(s, "symbolDimensions", DIM, { id: symbol });
    expect(dims).toEqual({ __typename: "SymbolSize", ...inPixels((await call(s.url, "GET", `/v2/symbols/${encodeURIComponent(symbol)}/dimensions`)).body) });
    // An unknown id falls back to the default symbol, as on REST; an image whose size cannot be read is a conflict.
    expect(await field(s, "symbolDimensions", DIM, { id: "nope.svg" })).toEqual({ __typename: "SymbolSize", ...inPixels((await call(s.url, "GET", "/v2/symbols/nope.svg/dimensions")).body) });
    expect((await call(s.url, "POST", "/v2/symbols/garbage.png/raw", "not a png")).status).toBe(204);
    expect(await field(s, "symbolDimensions", DIM, { id: "garbage.png" })).toEqual({ __typename: "ConflictError", message: "Could not read the size of symbol garbage.png" });

    const r = await gql(s.url, `{ appliances computeStatistics { compute { computeId name } statistics { memoryTotalBytes loadAveragePercent } } }`);
    expect(r.data.appliances).toEqual((await call(s.url, "GET", "/v2/appliances")).body);
    expect(r.data.computeStatistics).toEqual([
      { compute: { computeId: "local", name: expect.any(String) }, statistics: { memoryTotalBytes: expect.any(Number), loadAveragePercent: expect.any(Array) } },
    ]);

    const PORTS = `query($c: ID!) { computePorts(computeId: $c) { ${RESULT} ... on ComputePortUsage { consolePortRange consolePorts udpPortRange udpPorts } } }`;
    const ports = await field(s, "computePorts", PORTS, { c: "local" });
    const rest = (await call(s.url, "GET", "/v2/computes/local/ports")).body;
    expect(ports).toEqual({ __typename: "ComputePortUsage", consolePortRange: rest.console_port_range, consolePorts: rest.console_ports, udpPortRange: rest.udp_port_range, udpPorts: rest.udp_ports });
    expect(await field(s, "computePorts", PORTS, { c: "nope" })).toEqual({ __typename: "NotFoundError", message: "Compute ID nope doesn't exist" });
  });

  it("shutdownServer closes the projects and then the server, as POST /v2/shutdown", async () => {
    const p = await restProject(s, "gql-shutdown");
    const r = await field(s, "shutdownServer", `mutation { shutdownServer { ${RESULT} ... on ShutdownServerPayload { closedProjectIds } } }`);
    expect(r.closedProjectIds).toContain(globalId("Project", p.project_id));
    await s.closed;
    await expect(fetch(`${s.url}/v2/version`)).rejects.toThrow();
    const restarted = await startTestServer({}, { databaseUrl: s.databaseUrl, dataDir: s.dataDir });
    try {
      expect((await call(restarted.url, "GET", `/v2/projects/${p.project_id}`)).body.status).toBe("closed");
    } finally {
      await restarted.close();
    }
  });
});

describe("GraphQL parity: the local-only operations on a server that is not local", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer({ local: false })));
  afterAll(() => s?.close());

  it("refuses debug, shutdown and load with the REST routes' ForbiddenError, and keeps serving", async () => {
    const debug = await field(s, "writeDebugBundle", `mutation { writeDebugBundle { ${RESULT} } }`);
    expect(debug).toEqual({ __typename: "ForbiddenError", message: "You can only debug a local server" });
    const stop = await field(s, "shutdownServer", `mutation { shutdownServer { ${RESULT} } }`);
    expect(stop).toEqual({ __typename: "ForbiddenError", message: "You can only stop a local server" });
    const load = await field(s, "loadProject", `mutation { loadProject(input: { path: "/tmp/x.gns3" }) { ${RESULT} } }`);
    expect(load).toEqual({ __typename: "ForbiddenError", message: "Loading a project from a path is only allowed on a local server" });
    const p = await restProject(s, "not-local");
    const dup = await field(s, "duplicateProject", `mutation($id: ID!) { duplicateProject(input: { id: $id, name: "c", path: "/tmp/c" }) { ${RESULT} } }`, { id: p.project_id });
    expect(dup).toEqual({ __typename: "ForbiddenError", message: "Duplicating to a custom path is only allowed on a local server" });
    expect(fs.existsSync(path.join(s.dataDir, "debug"))).toBe(false);
    expect((await gql(s.url, `{ emulationServer { local } }`)).data.emulationServer).toEqual({ local: false });
  });
});

describe("GraphQL parity: the pass-through to a remote compute", () => {
  let ctl: TestServer;
  let cmp: TestServer;
  beforeAll(async () => {
    ctl = await startTestServer({ host: CONTROLLER_HOST });
    cmp = await startTestServer({ mode: "compute", host: COMPUTE_HOST });
    await registerCompute(ctl, "hostb", cmp.port);
  });
  afterAll(async () => {
    await ctl?.close();
    await cmp?.close();
  });

  const GET = `query($c: ID!, $e: String!, $p: String!) { computeResource(computeId: $c, emulator: $e, path: $p) {
    ${RESULT} ... on QueryComputeResourceSuccess { data } } }`;
  const SEND = `mutation($c: ID!, $e: String!, $p: String!, $b: JSON) { forwardToCompute(input: { computeId: $c, method: POST, emulator: $e, path: $p, body: $b }) {
    ${RESULT} ... on ForwardToComputePayload { response } } }`;

  it("computeResource reads through the compute API as GET /v2/computes/{id}/{emulator}/{path}", async () => {
    const ifaces = await field(ctl, "computeResource", GET, { c: "hostb", e: "network", p: "interfaces" });
    expect(ifaces.data).toEqual((await call(ctl.url, "GET", "/v2/computes/hostb/network/interfaces")).body);
    expect(ifaces.data).toContainEqual(expect.objectContaining({ id: "lo", ip_address: "127.0.0.1" }));
    expect(await field(ctl, "computeResource", GET, { c: "hostb", e: "vpcs", p: "images" })).toEqual({ __typename: "NotFoundError", message: "GET /vpcs/images not found" });
    expect(await field(ctl, "computeResource", GET, { c: "nope", e: "qemu", p: "images" })).toEqual({ __typename: "NotFoundError", message: "Compute ID nope doesn't exist" });
  });

  it("a compute's internal error is an UpstreamError, as REST's 500", async () => {
    // A foreign compute that fails every request.
    const broken = http.createServer((_req, res) => res.writeHead(500, { "content-type": "application/json" }).end('{"message":"boom"}'));
    await new Promise<void>((resolve) => broken.listen(0, COMPUTE_HOST, resolve));
    try {
      const port = (broken.address() as AddressInfo).port;
      expect((await call(ctl.url, "POST", "/v2/computes", { compute_id: "broken", protocol: "http", host: COMPUTE_HOST, port })).status).toBe(201);
      const rest = await call(ctl.url, "GET", "/v2/computes/broken/qemu/images");
      expect(rest.status).toBe(500);
      expect(await field(ctl, "computeResource", GET, { c: "broken", e: "qemu", p: "images" })).toEqual({ __typename: "UpstreamError", message: rest.body.message });
      // Dot segments are refused before the compute is asked: on a server that resolves them they would leave /v2/compute/.
      const dots = { __typename: "NotFoundError", message: "GET /qemu/../../v2/version not found" };
      expect(await field(ctl, "computeResource", GET, { c: "broken", e: "qemu", p: "../../v2/version" })).toEqual(dots);
    } finally {
      broken.close();
    }
  });

  it("forwardToCompute posts a JSON body and maps the compute's conflict to a ConflictError", async () => {
    const projectId = randomUUID();
    expect((await call(cmp.url, "POST", "/v2/compute/projects", { project_id: projectId, name: "fwd" })).status).toBe(201);
    const nodeId = randomUUID();
    const vars = { c: "hostb", e: "projects", p: `${projectId}/ethernet_hub/nodes`, b: { name: "HubF", node_id: nodeId } };
    const created = await field(ctl, "forwardToCompute", SEND, vars);
    expect(created.response).toMatchObject({ node_id: nodeId, name: "HubF" });
    expect(await field(ctl, "forwardToCompute", SEND, vars)).toEqual({ __typename: "ConflictError", message: `Node ID ${nodeId} already exists` });
  });
});
