import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

/**
 * A VPCS node from the VPCS template starts with GNS3's base script (`vpcs_base_config.txt`, whose command is
 * `set pcname %h`) written to its startup.vpc, `%h` being the node name: the GUI's "Edit config" reads it through
 * the node files API. Upstream, a node made without `base_script_file` has no startup.vpc (transcript 151: 404).
 */
const VPCS_ID = "19021f99-e36f-394d-b4a1-8aaa902ab9cc";
const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);

describe("VPCS startup.vpc from the template", () => {
  let s: TestServer;
  let pid: string;
  let P: string;
  beforeAll(async () => {
    s = await startTestServer();
    pid = (await call(s.url, "POST", "/v2/projects", { name: "startup-scripts" })).body.project_id;
    P = `/v2/projects/${pid}`;
  });
  afterAll(() => s.close());

  const fromTemplate = async (templateId = VPCS_ID) => {
    const r = await call(s.url, "POST", `${P}/templates/${templateId}`, { x: 0, y: 0, compute_id: "local" });
    expect(r.status, r.text).toBe(201);
    return r.body;
  };
  const startupFile = (nodeId: string) => call(s.url, "GET", `${P}/nodes/${nodeId}/files/startup.vpc`);
  const pcnames = (script: string) => script.match(/^set pcname .*$/gm);

  it("a node from the built-in template gets startup.vpc naming it (set pcname <name>); the property is not kept", async () => {
    const pc1 = await fromTemplate();
    expect(pc1.name).toBe("PC1");
    expect(pc1.properties).toEqual({});
    const file = await startupFile(pc1.node_id);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/octet-stream");
    expect(pcnames(file.text)).toEqual(["set pcname PC1"]);
    expect(file.text).not.toContain("%h");
    expect(fs.readFileSync(path.join(pc1.node_directory, "startup.vpc"), "utf8")).toBe(file.text);

    const pc2 = await fromTemplate();
    expect(pcnames((await startupFile(pc2.node_id)).text)).toEqual(["set pcname PC2"]);
  });

  it("over GraphQL too (createNodeFromTemplate)", async () => {
    const r = await gql(
      s.url,
      `mutation($p: ID!, $t: ID!) { createNodeFromTemplate(input: { projectId: $p, templateId: $t, x: 0, y: 0, computeId: "local" }) {
        ... on CreateNodeFromTemplatePayload { node { nodeId name properties settings { ... on VpcsSettings { baseScriptFile } } } } } }`,
      { p: pid, t: VPCS_ID },
    );
    const node = r.data?.createNodeFromTemplate.node;
    expect(node.properties).toEqual({});
    expect(node.settings).toEqual({ baseScriptFile: null }); // the base script made the node's startup script: not kept
    expect(pcnames((await startupFile(node.nodeId)).text)).toEqual([`set pcname ${node.name}`]);
  });

  it("a user VPCS template carries the base script by default", async () => {
    const t = await call(s.url, "POST", "/v2/templates", { name: "Lab PC", template_type: "vpcs", compute_id: "local", default_name_format: "LAB{0}" });
    expect(t.body.base_script_file).toBe("vpcs_base_config.txt");
    const node = await fromTemplate(t.body.template_id);
    expect(node.name).toBe("LAB1");
    expect(pcnames((await startupFile(node.node_id)).text)).toEqual(["set pcname LAB1"]);
  });

  it("without base_script_file there is no startup.vpc (404, as upstream); only the shipped base script can be named", async () => {
    const plain = (await call(s.url, "POST", `${P}/nodes`, { name: "Plain", node_type: "vpcs", compute_id: "local" })).body;
    const missing = await startupFile(plain.node_id);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(`GET /projects/${pid}/files/project-files/vpcs/${plain.node_id}/startup.vpc not found`);

    const direct = await call(s.url, "POST", `${P}/nodes`, { name: "Direct", node_type: "vpcs", compute_id: "local", properties: { base_script_file: "vpcs_base_config.txt" } });
    expect(direct.body.properties).toEqual({});
    expect(pcnames((await startupFile(direct.body.node_id)).text)).toEqual(["set pcname Direct"]);

    // GNS3 reads any file a client names (its configs directory, or an absolute path): here nothing is read.
    for (const base_script_file of ["/etc/passwd", "../../../../etc/hostname", "other.txt", ""]) {
      const r = await call(s.url, "POST", `${P}/nodes`, { name: "Probe", node_type: "vpcs", compute_id: "local", properties: { base_script_file } });
      expect(r.status, base_script_file).toBe(201);
      expect(r.body.properties).toEqual({});
      expect((await startupFile(r.body.node_id)).status, base_script_file).toBe(404);
    }
  });

  it("a rename and a duplicate put the node's own name on the set pcname line, keeping the user's edits", async () => {
    const pc = await fromTemplate();
    // "Edit config" saves through the node files API.
    expect((await call(s.url, "POST", `${P}/nodes/${pc.node_id}/files/startup.vpc`, `ip 10.0.0.5/24\nset pcname ${pc.name}\n`)).status).toBe(201);
    expect((await call(s.url, "PUT", `${P}/nodes/${pc.node_id}`, { name: "Web" })).body.name).toBe("Web");
    expect((await startupFile(pc.node_id)).text).toBe("ip 10.0.0.5/24\nset pcname Web\n");

    const copy = (await call(s.url, "POST", `${P}/nodes/${pc.node_id}/duplicate`, { x: 10, y: 10 })).body;
    expect(copy.name).toBe("Web1");
    expect((await startupFile(copy.node_id)).text).toBe("ip 10.0.0.5/24\nset pcname Web1\n");
    expect((await startupFile(pc.node_id)).text).toBe("ip 10.0.0.5/24\nset pcname Web\n");
  });

  it("the compute API writes a startup_script it is sent with %h as the node name, as GNS3's compute does", async () => {
    const C = `/v2/compute/projects/${pid}/vpcs/nodes`;
    const r = await call(s.url, "POST", C, { name: "Remote1", startup_script: "# for %h\nset pcname %h\n" });
    expect(r.status, r.text).toBe(201);
    expect(fs.readFileSync(path.join(r.body.node_directory, "startup.vpc"), "utf8")).toBe("# for Remote1\nset pcname Remote1\n");
  });

  it.skipIf(!hasVpcs)("the running PC loads it: its prompt is the node's name (requires the vpcs package)", async () => {
    const pc = await fromTemplate();
    expect((await call(s.url, "PUT", `${P}/nodes/${pc.node_id}`, { name: "Gw" })).status).toBe(200);
    const started = await call(s.url, "POST", `${P}/nodes/${pc.node_id}/start`);
    expect(started.body.status, started.text).toBe("started");
    expect(started.body.command_line).toContain(path.join(pc.node_directory, "startup.vpc"));
    const console = await TelnetClient.connect(started.body.console);
    try {
      await console.waitFor(/Gw> $/);
    } finally {
      console.close();
      await call(s.url, "POST", `${P}/nodes/${pc.node_id}/stop`);
    }
  }, 30_000);
});
