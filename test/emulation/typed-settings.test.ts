import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 22 point 6: node and template settings are typed objects where their shape is known. `settings` shows them
 * (one union member per node type), `NodeSettingsInput` sets them (exactly one member, the node's type), and what
 * they set is GNS3's snake_case properties, as the REST face shows them; a change merges into the stored ones.
 */
const ERR = "... on Error { __typename code message }";
const SETTINGS = `settings { __typename
  ... on VpcsSettings { startupScriptFile baseScriptFile usage }
  ... on EthernetSwitchSettings { ports { portNumber name type vlan ethertype } usage }
  ... on EthernetHubSettings { ports { portNumber name } }
  ... on CloudSettings { hostPorts: ports { name portNumber type interface localPort remoteHost remotePort } remoteConsole { host port type httpPath } }
  ... on QemuSettings { platform ramMb cpus adapters onClose options cpuThrottlingPercent usage } }`;
const CREATE = `mutation($i: CreateNodeInput!) { createNode(input: $i) { __typename ... on CreateNodePayload { node { nodeId nodeType ${SETTINGS} properties } } ${ERR} } }`;
const UPDATE = `mutation($i: UpdateNodeInput!) { updateNode(input: $i) { __typename ... on UpdateNodePayload { node { ${SETTINGS} } } ${ERR} } }`;

const SWITCH_PORTS = [
  { portNumber: 0, name: "Uplink", type: "DOT1Q", vlan: 1 },
  { portNumber: 1, name: "Office", type: "ACCESS", vlan: 10 },
  { portNumber: 2, name: "Carrier", type: "QINQ", vlan: 100, ethertype: "0x88A8" },
];
const GNS3_SWITCH_PORTS = [
  { port_number: 0, name: "Uplink", type: "dot1q", vlan: 1 },
  { port_number: 1, name: "Office", type: "access", vlan: 10 },
  { port_number: 2, name: "Carrier", type: "qinq", vlan: 100, ethertype: "0x88A8" },
];

describe("emulation: typed node and template settings (GraphQL)", () => {
  let s: TestServer;
  let projectId: string;
  const rest = (nodeId: string) => call(s.url, "GET", `/v2/projects/${projectId}/nodes/${nodeId}`);
  const create = async (input: Record<string, unknown>) => (await gql(s.url, CREATE, { i: { projectId, ...input } })).data.createNode;
  const update = async (input: Record<string, unknown>) => (await gql(s.url, UPDATE, { i: input })).data.updateNode;

  beforeAll(async () => {
    s = await startTestServer();
    projectId = (await call(s.url, "POST", "/v2/projects", { name: "typed-settings" })).body.project_id;
  });
  afterAll(() => s?.close());

  it("a VPCS node: its settings typed, its usage note kept in GNS3's properties", async () => {
    const pc = await create({ name: "PC1", nodeType: "VPCS", settings: { vpcs: { usage: "ping 10.0.0.2" } } });
    expect(pc.node.settings).toEqual({ __typename: "VpcsSettings", startupScriptFile: "startup.vpc", baseScriptFile: null, usage: "ping 10.0.0.2" });
    expect((await rest(pc.node.nodeId)).body.properties).toEqual({ usage: "ping 10.0.0.2" });
  });

  it("a switch with its own ports: typed back, snake_case on the REST face, a change keeps what it does not name", async () => {
    const sw = await create({ name: "SW1", nodeType: "ETHERNET_SWITCH", settings: { ethernetSwitch: { ports: SWITCH_PORTS } } });
    expect(sw.__typename).toBe("CreateNodePayload");
    expect(sw.node.settings).toEqual({
      __typename: "EthernetSwitchSettings",
      ports: SWITCH_PORTS.map((p) => ({ ethertype: null, ...p })),
      usage: "",
    });
    expect((await rest(sw.node.nodeId)).body.properties.ports_mapping).toEqual(GNS3_SWITCH_PORTS);

    const noted = await update({ id: sw.node.nodeId, settings: { ethernetSwitch: { usage: "VLAN 10: office" } } });
    expect(noted.node.settings).toMatchObject({ ports: SWITCH_PORTS.map((p) => ({ ethertype: null, ...p })), usage: "VLAN 10: office" });
    expect((await rest(sw.node.nodeId)).body.properties).toEqual({ ports_mapping: GNS3_SWITCH_PORTS, usage: "VLAN 10: office" });

    // The port rule is the node's input contract, on both faces: nothing is written.
    const bad = await update({ id: sw.node.nodeId, settings: { ethernetSwitch: { ports: [{ portNumber: 0, name: "X", type: "ACCESS", vlan: 5000 }] } } });
    expect(bad).toMatchObject({ __typename: "InvalidInputError", message: expect.stringContaining("vlan") });
    const badRest = await call(s.url, "PUT", `/v2/projects/${projectId}/nodes/${sw.node.nodeId}`, { properties: { ports_mapping: [{ name: "X", port_number: 0, type: "trunk", vlan: 1 }] } });
    expect(badRest.status).toBe(400);
    expect((await rest(sw.node.nodeId)).body.properties.ports_mapping).toEqual(GNS3_SWITCH_PORTS);

    // GNS3's schema leaves a port's vlan optional (a REST client may send a trunk without one): VLAN 1 then.
    const noVlan = await call(s.url, "PUT", `/v2/projects/${projectId}/nodes/${sw.node.nodeId}`, { properties: { ports_mapping: [{ name: "T", port_number: 0, type: "dot1q" }] } });
    expect(noVlan.status).toBe(200);
    expect(noVlan.body.properties.ports_mapping).toEqual([{ name: "T", port_number: 0, type: "dot1q" }]);
    const shown = await gql(s.url, `query($id: ID!) { node(id: $id) { ... on EmulatedNode { settings { ... on EthernetSwitchSettings { ports { portNumber type vlan } } } } } }`, {
      id: globalId("EmulatedNode", sw.node.nodeId),
    });
    expect(shown.data.node.settings).toEqual({ ports: [{ portNumber: 0, type: "DOT1Q", vlan: 1 }] });
  });

  it("a hub: its ports typed", async () => {
    const hub = await create({ name: "HUB1", nodeType: "ETHERNET_HUB", settings: { ethernetHub: { ports: [{ portNumber: 0, name: "a" }, { portNumber: 1, name: "b" }] } } });
    expect(hub.node.settings).toEqual({ __typename: "EthernetHubSettings", ports: [{ portNumber: 0, name: "a" }, { portNumber: 1, name: "b" }] });
    expect((await rest(hub.node.nodeId)).body.properties.ports_mapping).toEqual([{ port_number: 0, name: "a" }, { port_number: 1, name: "b" }]);
  });

  it("a cloud: a UDP port and its remote console typed, GNS3's names on the REST face, one console field changed", async () => {
    const udp = { name: "tunnel", portNumber: 0, type: "UDP", localPort: 20001, remoteHost: "127.0.0.1", remotePort: 20002 };
    const cloud = await create({ name: "C1", nodeType: "CLOUD", settings: { cloud: { ports: [udp], remoteConsole: { host: "10.0.0.5", port: 2323, type: "TELNET" } } } });
    expect(cloud.node.settings).toEqual({
      __typename: "CloudSettings",
      hostPorts: [{ ...udp, interface: null }],
      remoteConsole: { host: "10.0.0.5", port: 2323, type: "TELNET", httpPath: "/" },
    });
    expect((await rest(cloud.node.nodeId)).body.properties).toMatchObject({
      ports_mapping: [{ name: "tunnel", port_number: 0, type: "udp", lport: 20001, rhost: "127.0.0.1", rport: 20002 }],
      remote_console_host: "10.0.0.5",
      remote_console_port: 2323,
      remote_console_type: "telnet",
    });
    const moved = await update({ id: cloud.node.nodeId, settings: { cloud: { remoteConsole: { port: 2424 } } } });
    expect(moved.node.settings.remoteConsole).toEqual({ host: "10.0.0.5", port: 2424, type: "TELNET", httpPath: "/" });
    // The cloud's port rule (GNS3's): a udp port names no interface.
    const bad = await update({ id: cloud.node.nodeId, settings: { cloud: { ports: [{ ...udp, interface: "eth0" }] } } });
    expect(bad.__typename).toBe("InvalidInputError");
  });

  it("a qemu node: units in the names, GNS3's names on the REST face, an update merges one field", async () => {
    const settings = { qemu: { platform: "x86_64", ramMb: 192, cpus: 2, adapters: 2, onClose: "SHUTDOWN_SIGNAL", options: "-nographic", cpuThrottlingPercent: 50 } };
    const vm = await create({ name: "VM1", nodeType: "QEMU", settings });
    expect(vm.node.settings).toEqual({ __typename: "QemuSettings", ...settings.qemu, usage: "" });
    expect((await rest(vm.node.nodeId)).body.properties).toMatchObject({ platform: "x86_64", ram: 192, cpus: 2, adapters: 2, on_close: "shutdown_signal", options: "-nographic", cpu_throttling: 50 });

    const grown = await update({ id: vm.node.nodeId, settings: { qemu: { ramMb: 320 } } });
    expect(grown.node.settings).toEqual({ __typename: "QemuSettings", ...settings.qemu, ramMb: 320, usage: "" });
    expect((await rest(vm.node.nodeId)).body.properties).toMatchObject({ platform: "x86_64", ram: 320, cpus: 2, adapters: 2, cpu_throttling: 50 });
    // The qemu rules are the same as REST's: an option reaching a host file is refused.
    expect(await update({ id: vm.node.nodeId, settings: { qemu: { options: "-drive file=/etc/passwd" } } })).toMatchObject({ __typename: "InvalidInputError" });
  });

  it("the member must be the node's type; the JSON escape hatch is only for types without typed settings; one member at most", async () => {
    const pc = await create({ name: "PC9", nodeType: "VPCS" });
    const mismatch = await update({ id: pc.node.nodeId, settings: { qemu: { ramMb: 512 } } });
    expect(mismatch).toMatchObject({ __typename: "InvalidInputError", code: "INVALID_INPUT", message: "settings.qemu does not apply to the node type vpcs: it takes settings.vpcs" });
    expect(await create({ name: "PC10", nodeType: "VPCS", settings: { ethernetSwitch: { ports: [] } } })).toMatchObject({ __typename: "InvalidInputError" });
    const hatch = await update({ id: pc.node.nodeId, properties: { usage: "x" } });
    expect(hatch).toMatchObject({ __typename: "InvalidInputError", message: "properties is only for node types without typed settings: vpcs takes settings.vpcs" });

    const two = await gql(s.url, UPDATE, { i: { id: pc.node.nodeId, settings: { vpcs: { usage: "a" }, qemu: { ramMb: 512 } } } });
    expect(two.data).toBeUndefined();
    expect(two.errors?.[0].message).toMatch(/Exactly one key must be specified for OneOf type "NodeSettingsInput"/);
    expect((await rest(pc.node.nodeId)).body.properties).toEqual({});

    // A Frame Relay switch has no typed settings: its GNS3 properties go through the escape hatch.
    const frsw = await create({ name: "FR1", nodeType: "FRAME_RELAY_SWITCH", properties: { mappings: { "0:102": "1:201" } } });
    expect(frsw.node).toMatchObject({ settings: null, properties: { mappings: { "0:102": "1:201" } } });
    expect(await update({ id: frsw.node.nodeId, settings: { vpcs: { usage: "x" } } })).toMatchObject({
      __typename: "InvalidInputError",
      message: "settings.vpcs does not apply to the node type frame_relay_switch: it takes properties (the type has no typed settings)",
    });
  });
});

describe("emulation: typed template settings (GraphQL)", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s?.close());

  const TEMPLATE = `template { templateId consoleType untypedSettings ${SETTINGS} }`;
  const CREATE_TEMPLATE = `mutation($i: CreateTemplateInput!) { createTemplate(input: $i) { __typename ... on CreateTemplatePayload { ${TEMPLATE} } ${ERR} } }`;
  const UPDATE_TEMPLATE = `mutation($i: UpdateTemplateInput!) { updateTemplate(input: $i) { __typename ... on UpdateTemplatePayload { ${TEMPLATE} } ${ERR} } }`;

  it("a switch template: typed defaults, GNS3's keys on the REST face, merged on update, its nodes made with them", async () => {
    const created = (await gql(s.url, CREATE_TEMPLATE, { i: { name: "Edge", templateType: "ETHERNET_SWITCH", computeId: "local", consoleType: "TELNET", settings: { ethernetSwitch: { ports: SWITCH_PORTS } } } })).data.createTemplate;
    expect(created.template).toMatchObject({ consoleType: "TELNET", untypedSettings: null, settings: { __typename: "EthernetSwitchSettings", ports: SWITCH_PORTS.map((p) => ({ ethertype: null, ...p })), usage: "" } });
    const id = created.template.templateId;
    expect((await call(s.url, "GET", `/v2/templates/${id}`)).body).toMatchObject({ console_type: "telnet", ports_mapping: GNS3_SWITCH_PORTS });

    const noted = (await gql(s.url, UPDATE_TEMPLATE, { i: { id, settings: { ethernetSwitch: { usage: "uplink on port 0" } } } })).data.updateTemplate;
    expect(noted.template).toMatchObject({ consoleType: "TELNET", settings: { ports: SWITCH_PORTS.map((p) => ({ ethertype: null, ...p })), usage: "uplink on port 0" } });
    expect((await call(s.url, "GET", `/v2/templates/${id}`)).body).toMatchObject({ usage: "uplink on port 0", ports_mapping: GNS3_SWITCH_PORTS });

    const mismatch = (await gql(s.url, UPDATE_TEMPLATE, { i: { id, settings: { qemu: { ramMb: 512 } } } })).data.updateTemplate;
    expect(mismatch).toMatchObject({ __typename: "InvalidInputError", message: "settings.qemu does not apply to the node type ethernet_switch: it takes settings.ethernetSwitch" });
    const two = await gql(s.url, UPDATE_TEMPLATE, { i: { id, settings: { ethernetSwitch: { usage: "a" }, ethernetHub: { usage: "b" } } } });
    expect(two.errors?.[0].message).toMatch(/Exactly one key must be specified for OneOf type "NodeSettingsInput"/);

    const projectId = (await call(s.url, "POST", "/v2/projects", { name: "from-template" })).body.project_id;
    const made = await gql(s.url, `mutation($p: ID!, $t: ID!) { createNodeFromTemplate(input: { projectId: $p, templateId: $t, x: 0, y: 0 }) { ... on CreateNodeFromTemplatePayload { node { ${SETTINGS} } } } }`, { p: projectId, t: id });
    expect(made.data.createNodeFromTemplate.node.settings.ports).toEqual(SWITCH_PORTS.map((p) => ({ ethertype: null, ...p })));
  });

  it("a qemu template: units in the names, GNS3's names on the REST face; the built-in VPCS template's base script; an untyped type's JSON", async () => {
    const qemu = (await gql(s.url, CREATE_TEMPLATE, {
      i: { name: "tiny", templateType: "QEMU", computeId: "local", portNameFormat: "eth{0}", customAdapters: [{ adapterNumber: 0, portName: "mgmt" }], settings: { qemu: { platform: "x86_64", ramMb: 128, usage: "root, no password" } } },
    })).data.createTemplate;
    expect(qemu.template.settings).toMatchObject({ __typename: "QemuSettings", platform: "x86_64", ramMb: 128, cpus: 1, usage: "root, no password" });
    expect((await call(s.url, "GET", `/v2/templates/${qemu.template.templateId}`)).body).toMatchObject({
      platform: "x86_64",
      ram: 128,
      usage: "root, no password",
      port_name_format: "eth{0}",
      custom_adapters: [{ adapter_number: 0, port_name: "mgmt" }],
    });

    const vpcs = await gql(s.url, `{ template(id: "19021f99-e36f-394d-b4a1-8aaa902ab9cc") { consoleType ${SETTINGS} } }`);
    expect(vpcs.data.template.settings).toEqual({ __typename: "VpcsSettings", startupScriptFile: "startup.vpc", baseScriptFile: "vpcs_base_config.txt", usage: "" });

    const iou = (await gql(s.url, CREATE_TEMPLATE, { i: { name: "l2", templateType: "IOU", computeId: "local", untypedSettings: { path: "i86bi.bin", ram: 256 } } })).data.createTemplate;
    expect(iou.template).toMatchObject({ settings: null, untypedSettings: { path: "i86bi.bin", ram: 256 } });
    const closed = (await gql(s.url, CREATE_TEMPLATE, { i: { name: "x", templateType: "VPCS", untypedSettings: { base_script_file: "x" } } })).data.createTemplate;
    expect(closed).toMatchObject({ __typename: "InvalidInputError", message: "untypedSettings is only for node types without typed settings: vpcs takes settings.vpcs" });
  });
});
