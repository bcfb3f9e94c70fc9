import "../projects/graphql.js"; // the Project type this file extends
import { ComputeCapabilities, ComputeRef } from "../computes/graphql.js";
import { getCompute } from "../computes/operations.js";
import { batchLoad, eachFound } from "../../platform/graphql/batch-load.js";
import type { Node, Project } from "../../generated/prisma-sqlite/client.js";
import { builder, enumValues, usableQuery } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, UnavailableError } from "../../platform/core/errors.js";
import { deletedPayload, idInput, mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { itemAddress } from "../projects/address.js";
import { ProjectRef, projectIdArg } from "../projects/graphql.js";
import type { AppContext } from "../../platform/context.js";
import { withDomainNames } from "../../platform/graphql/domain-names.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { getOpenedProject, OPENED_PROJECT_ERRORS, TOPOLOGY_CHANGE_ERRORS } from "../projects/lookup.js";
import { resetNodeConsole, resetProjectConsoles } from "./console-reset.js";
import { duplicateNode } from "./duplicate.js";
import { idlePc } from "./dynamips.js";
import { createNode, deleteNode, updateNode } from "./operations.js";
import { projectDir } from "../projects/serialize.js";
import { nodePorts, type NodePort } from "../node-model/ports.js";
import { BUILTIN_TYPES, nodeDirectory, nodeProperties } from "../node-model/serialize.js";
import { nodeFields, type NodeChanges } from "./schema.js";
import { CONSOLE_TYPES, NODE_STATUSES, NODE_TYPES } from "../node-model/vocabularies.js";
import { NodeSettings, NodeSettingsInput, propertiesFromInput, typedSettings, UNTYPED_NODE_TYPES } from "./node-settings-graphql.js";

/** The project directory an event's node carries (see notifications/graphql.ts), if it is one. */
const eventProjectDir = (n: object): string | undefined => ((n as { [EVENT_PROJECT_DIR]?: string })[EVENT_PROJECT_DIR]);
/** Where an event's node keeps the project directory the event carries. */
export const EVENT_PROJECT_DIR = Symbol("projectDir");

export const NodeTypeEnum = builder.enumType("NodeType", {
  description: "What kind of device a node emulates, and so which emulator runs it",
  values: enumValues(NODE_TYPES, {
    cloud: "A bridge to this host's network interfaces (or UDP tunnels): the lab's way out to real networks",
    nat: "A NAT gateway to this host's network: nodes behind it reach outside addresses, not the other way round",
    ethernet_hub: "A built-in Ethernet hub: every frame goes to every other port",
    ethernet_switch: "A built-in Ethernet switch with access, dot1q and QinQ ports",
    frame_relay_switch: "A built-in Frame Relay switch that maps DLCIs between serial ports",
    atm_switch: "A built-in ATM switch that maps VPI/VCI pairs between ports",
    docker: "A Docker container, its interfaces eth0…N-1",
    dynamips: "A Cisco router emulated by Dynamips (not run by this server)",
    vpcs: "A Virtual PC Simulator: a lightweight host with ping, traceroute and DHCP",
    traceng: "A TraceNG host, a Windows tracing tool (not run by this server)",
    virtualbox: "A VirtualBox virtual machine (not run by this server)",
    vmware: "A VMware virtual machine (not run by this server)",
    iou: "A Cisco IOS on UNIX image (not run by this server)",
    qemu: "A QEMU virtual machine booted from disk images",
  }),
});

/** A compute edge's target: read once per distinct id for a whole list (a lab's nodes share one or a few); null once unregistered. */
export const computeById = async (ctx: AppContext, id: string) =>
  (await batchLoad(ctx, "Compute", null, id, eachFound((c) => getCompute(ctx, c)), (c) => c.compute_id))[0] ?? null;

/** The node an argument names (its global id or its GNS3 id) and its project; NotFoundError when there is none. */
export const nodeAddress = (ctx: AppContext, id: string | number) =>
  itemAddress(id, "EmulatedNode", (nodeId) => ctx.db.node.findUnique({ where: { id: nodeId }, select: { projectId: true } }), "Node");

const isNodeType = (t: string): t is (typeof NODE_TYPES)[number] => (NODE_TYPES as readonly string[]).includes(t);

builder.objectField(ComputeCapabilities, "nodeTypes", (t) =>
  t.field({
    type: [NodeTypeEnum],
    description: "The node types the compute can run (a type a remote compute names that this schema does not know is left out)",
    resolve: (c) => c.node_types.filter(isNodeType),
  }),
);
export const NodeStatusEnum = builder.enumType("NodeStatus", {
  description: "Whether a node's emulator is running",
  values: enumValues(NODE_STATUSES, {
    stopped: "Not running: consoles closed, no traffic through its ports",
    started: "Running: consoles open and its links forward traffic",
    suspended: "Paused with its state in memory; resuming continues where it stopped",
  }),
});
export const ConsoleTypeEnum = builder.enumType("ConsoleType", {
  description: "The protocol a node's console is served over",
  values: enumValues(CONSOLE_TYPES, {
    vnc: "A VNC graphical console",
    telnet: "A text console (serial line) over telnet",
    http: "A web interface over HTTP",
    https: "A web interface over HTTPS",
    spice: "A SPICE graphical console",
    "spice+agent": "A SPICE graphical console with the guest agent (clipboard, resolution)",
    none: "No console",
  }),
});
export const LinkTypeEnum = builder.enumType("LinkType", {
  description: "The kind of wire a port takes",
  values: enumValues(["ethernet", "serial"] as const, { ethernet: "An Ethernet port", serial: "A serial (WAN) port" }),
});

/** The link-layer types a port offers and a capture writes (shared with links/capture-graphql.ts). */
export const CaptureDataLinkType = builder.enumType("CaptureDataLinkType", {
  description: "Link-layer header type written into the pcap file",
  values: {
    EN10MB: { value: "DLT_EN10MB", description: "Ethernet (default)" },
    ATM_RFC1483: { value: "DLT_ATM_RFC1483", description: "ATM (RFC 1483 encapsulation), for ATM switch links" },
    FRELAY: { value: "DLT_FRELAY", description: "Frame Relay, for Frame Relay switch links" },
    C_HDLC: { value: "DLT_C_HDLC", description: "Cisco HDLC, for serial links" },
    PPP_SERIAL: { value: "DLT_PPP_SERIAL", description: "PPP over a serial link" },
  } as const,
});
type DataLinkTypeValue = (typeof CaptureDataLinkType)["$inferType"];
const DataLinkTypeRef = builder.objectRef<{ name: string; dlt: DataLinkTypeValue }>("DataLinkType").implement({
  description: "A link-layer type a capture on a port can record",
  fields: (t) => ({
    name: t.exposeString("name", { description: "Its name for a person (Ethernet, Cisco HDLC …)" }),
    dlt: t.field({ type: CaptureDataLinkType, description: "The type itself: what startCapture's dataLinkType takes", resolve: (d) => d.dlt }),
  }),
});

const NodePortType = builder.objectRef<NodePort>("NodePort").implement({
  description: "A network interface of a node; links attach to (adapterNumber, portNumber)",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The interface's name as the device calls it (Ethernet0, eth1 …)" }),
    shortName: t.exposeString("short_name", { description: "The abbreviated name drawn next to a link's end (e0, eth1 …)" }),
    adapterNumber: t.exposeInt("adapter_number", { description: "The adapter (network card) the port is on, from 0" }),
    portNumber: t.exposeInt("port_number", { description: "The port on its adapter, from 0" }),
    linkType: t.field({ type: LinkTypeEnum, description: "The kind of wire the port takes", resolve: (p) => p.link_type }),
    dataLinkTypes: t.field({
      type: [DataLinkTypeRef],
      description: "The link-layer types a capture on this port can record",
      resolve: (p) => Object.entries(p.data_link_types).map(([name, dlt]) => ({ name, dlt: dlt as DataLinkTypeValue })),
    }),
    adapterType: t.string({ nullable: true, description: "The emulated NIC of an adapter port (qemu: e1000 …)", resolve: (p) => p.adapter_type ?? null }),
    macAddress: t.string({ nullable: true, description: "The adapter's MAC (qemu: the node's base MAC plus the adapter number)", resolve: (p) => p.mac_address ?? null }),
  }),
});

/** A stored label's number as a whole number of pixels or degrees (an imported topology may hold anything). */
const whole = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? Math.round(v) : null);
type StoredLabel = Record<string, unknown>;

/** A name drawn on the canvas: a node's name, or the text at a link's end. */
export const LabelRef = builder.objectRef<StoredLabel>("Label").implement({
  description: "Text drawn on the canvas next to a node or at a link's end, and how",
  fields: (t) => ({
    text: t.string({ nullable: true, description: "The text drawn (a node's label is always its name)", resolve: (l) => (typeof l.text === "string" ? l.text : null) }),
    style: t.string({ nullable: true, description: "SVG text style (font-family, font-size, fill …)", resolve: (l) => (typeof l.style === "string" ? l.style : null) }),
    x: t.int({ nullable: true, description: "Offset from the node's left edge, in pixels (null: centred)", resolve: (l) => whole(l.x) }),
    y: t.int({ nullable: true, description: "Offset from the node's top edge, in pixels", resolve: (l) => whole(l.y) }),
    rotationDegrees: t.int({ nullable: true, description: "Rotation, in degrees (-359 to 360)", resolve: (l) => whole(l.rotation) }),
  }),
});

/** The node fields whose GraphQL name carries the unit: GraphQL name → the domain's. */
export const NODE_NAMES = { widthPixels: "width", heightPixels: "height" } as const;
/** The label fields whose GraphQL name carries the unit (node labels and link end labels). */
export const LABEL_NAMES = { rotationDegrees: "rotation" };

const NodeLabelInput = builder.inputType("NodeLabelInput", {
  description: "Where the node name is drawn; the text is always the node name",
  fields: (t) => ({
    style: t.string({ description: "SVG text style (font-family, font-size, fill …)" }),
    x: t.int({ description: "Offset from the node's left edge, in pixels" }),
    y: t.int({ description: "Offset from the node's top edge, in pixels" }),
    rotationDegrees: t.int({ description: "Rotation, in degrees (-359 to 360)" }),
  }),
});

/** A per-adapter override as GNS3 stores it (an imported topology may hold anything: each field is checked). */
type StoredAdapter = Record<string, unknown>;
const stringOf = (v: unknown) => (typeof v === "string" ? v : null);
export const CustomAdapterRef = builder.objectRef<StoredAdapter>("CustomAdapter").implement({
  description: "An override for one adapter of a node: its port's name, its NIC model or its MAC",
  fields: (t) => ({
    adapterNumber: t.int({ description: "The adapter it applies to, from 0", resolve: (a) => (typeof a.adapter_number === "number" ? a.adapter_number : 0) }),
    portName: t.string({ nullable: true, description: "The name of the adapter's port (instead of the node's port name format)", resolve: (a) => stringOf(a.port_name) }),
    adapterType: t.string({ nullable: true, description: "The emulated NIC of the adapter (qemu: e1000, virtio-net-pci …)", resolve: (a) => stringOf(a.adapter_type) }),
    macAddress: t.string({ nullable: true, description: "The adapter's MAC address", resolve: (a) => stringOf(a.mac_address) }),
  }),
});
const CustomAdapterInput = builder.inputType("CustomAdapterInput", {
  description: "An override for one adapter of a node: what is not given keeps the node's default",
  fields: (t) => ({
    adapterNumber: t.int({ required: true, description: "The adapter it applies to, from 0" }),
    portName: t.string({ description: "The name of the adapter's port" }),
    adapterType: t.string({ description: "The emulated NIC of the adapter (qemu: e1000, virtio-net-pci …)" }),
    macAddress: t.string({ description: "The adapter's MAC address" }),
  }),
});
/** Typed overrides onto GNS3's stored form, which the node's input contract checks as REST's. */
export const gns3Adapters = (list: (typeof CustomAdapterInput.$inferInput)[]) =>
  list.map((a) => ({
    adapter_number: a.adapterNumber,
    ...(a.portName != null ? { port_name: a.portName } : {}),
    ...(a.adapterType != null ? { adapter_type: a.adapterType } : {}),
    ...(a.macAddress != null ? { mac_address: a.macAddress } : {}),
  }));

export const NodeRef = builder.prismaNode("Node", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  name: "EmulatedNode",
  description: "A device in a project (named EmulatedNode because Node is the Relay interface)",
  id: { field: "id", description: "The node's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    nodeId: t.exposeID("id", { description: "The node's GNS3 id (a UUID): the `node_id` of the REST API and the GNS3 GUI" }),
    project: t.relation("project", { description: "The project the node belongs to" }),
    compute: t.field({
      type: ComputeRef,
      nullable: true,
      description: "The compute (emulation host) that runs the node: this server, or a remote one (null once that one is unregistered)",
      select: { computeId: true },
      resolve: (n, _a, ctx) => computeById(ctx, n.computeId),
    }),
    nodeType: t.field({ type: NodeTypeEnum, description: "What kind of device the node emulates", resolve: (n) => n.nodeType as (typeof NODE_TYPES)[number] }),
    name: t.exposeString("name", { description: "The node's name, unique in its project" }),
    status: t.field({ type: NodeStatusEnum, description: "Whether the node's emulator is running", resolve: (n) => n.status as (typeof NODE_STATUSES)[number] }),
    console: t.exposeInt("console", { nullable: true, description: "The TCP port of the node's console on `consoleHost` (null without a console)" }),
    consoleHost: t.exposeString("consoleHost", { nullable: true, description: "The host address to open the console on" }),
    consoleType: t.field({ type: ConsoleTypeEnum, nullable: true, description: "The protocol the console speaks", resolve: (n) => n.consoleType as (typeof CONSOLE_TYPES)[number] | null }),
    consoleAutoStart: t.exposeBoolean("consoleAutoStart", { description: "Whether a client should open the console when the node starts" }),
    commandLine: t.exposeString("commandLine", { nullable: true, description: "The emulator's command line while the node runs (null when stopped or built in)" }),
    nodeDirectory: t.string({
      nullable: true,
      description: "Where the node's files are (null for built-in devices)",
      select: { project: { select: { id: true, path: true } } },
      // An event's node carries its project directory as it was (events.ts): the node may be gone since.
      resolve: (n, _a, ctx) => {
        if (BUILTIN_TYPES.has(n.nodeType)) return null;
        const dir = eventProjectDir(n) ?? (n.project ? projectDir(ctx, n.project) : undefined);
        return dir === undefined ? null : nodeDirectory(dir, n);
      },
    }),
    settings: t.field({
      type: NodeSettings,
      nullable: true,
      description: "The emulator settings, typed by node type (null for the types without typed settings: read their `properties`)",
      resolve: (n) => typedSettings(n.nodeType, nodeProperties(n), n.id),
    }),
    properties: t.field({
      type: "JSON",
      description: `The emulator settings as GNS3 names them (snake_case): the escape hatch for node types without typed \`settings\` (${UNTYPED_NODE_TYPES})`,
      resolve: (n) => nodeProperties(n),
    }),
    label: t.field({ type: LabelRef, description: "Where and how the node's name is drawn", resolve: (n) => ({ ...(JSON.parse(n.labelJson) as StoredLabel), text: n.name }) }),
    symbol: t.exposeString("symbol", { nullable: true, description: "The icon drawn for the node (a built-in symbol such as :/symbols/router.svg, or an uploaded one)" }),
    widthPixels: t.exposeInt(NODE_NAMES.widthPixels, { description: "The symbol's width on the canvas, in pixels" }),
    heightPixels: t.exposeInt(NODE_NAMES.heightPixels, { description: "The symbol's height on the canvas, in pixels" }),
    x: t.exposeInt("x", { description: "Horizontal position on the canvas, in pixels" }),
    y: t.exposeInt("y", { description: "Vertical position on the canvas, in pixels" }),
    z: t.exposeInt("z", { description: "Stacking order on the canvas: higher is drawn on top" }),
    locked: t.exposeBoolean("locked", { description: "Whether the node is pinned on the canvas (cannot be moved)" }),
    portNameFormat: t.exposeString("portNameFormat", { description: "How port names are formed: {0} the port number, {port0}/{port1} from 0 or 1, {segment0}… per segment" }),
    portSegmentSize: t.exposeInt("portSegmentSize", { description: "Ports per segment for the {segment…} placeholders (0: one segment)" }),
    firstPortName: t.exposeString("firstPortName", { nullable: true, description: "A name for the first port that overrides the format (e.g. a management interface)" }),
    customAdapters: t.field({ type: [CustomAdapterRef], description: "Per-adapter overrides of the port name, NIC model or MAC", resolve: (n) => JSON.parse(n.customAdapters) as StoredAdapter[] }),
    ports: t.field({ type: [NodePortType], description: "The node's network interfaces, where links attach", resolve: (n) => nodePorts({ ...n, properties: nodeProperties(n) }) }),
  }),
});

const nodeFilterFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  status: t.field({ type: [NodeStatusEnum], description: "Nodes in one of these states" }),
  nodeType: t.field({ type: [NodeTypeEnum], description: "Nodes of one of these types" }),
});
const ProjectNodeFilter = builder.inputType("ProjectNodeFilter", {
  description: "A project's nodes matching every field given",
  fields: nodeFilterFields,
});
const NodeFilter = builder.inputType("NodeFilter", {
  description: "Nodes of any project matching every field given",
  fields: (t) => ({ ...nodeFilterFields(t), project: t.id({ description: "Only the nodes of this project" }) }),
});

type NodeFilterInput = { status?: readonly string[] | null; nodeType?: readonly string[] | null; project?: string | number | null };
const nodeWhere = (f: NodeFilterInput | null | undefined) => ({
  ...(f?.status?.length ? { status: { in: [...f.status] } } : {}),
  ...(f?.nodeType?.length ? { nodeType: { in: [...f.nodeType] } } : {}),
  ...(f?.project != null ? { projectId: projectIdArg(f.project, "filter.project") } : {}),
});
const NODE_ORDER = [{ createdAt: "asc" }, { id: "asc" }] as const;

builder.prismaObjectFields("Project", (t) => ({
  // Planned with the project (one statement per level for a page of projects), the count with it.
  nodes: t.relatedConnection("nodes", {
    cursor: "id",
    description: "The project's nodes in creation order",
    args: { filter: t.arg({ type: ProjectNodeFilter, description: "Only the nodes that match" }) },
    query: (args) => ({ where: nodeWhere(args.filter), orderBy: [...NODE_ORDER] }),
    totalCount: true,
  }),
}));

builder.queryField("emulatedNodes", (t) =>
  t.prismaConnection(
    {
      type: "Node",
      cursor: "id",
      description: "Nodes across all projects, in creation order (e.g. every started node: filter {status: STARTED})",
      args: { filter: t.arg({ type: NodeFilter, description: "Only the nodes that match" }) },
      resolve: (query, _r, args, ctx) => ctx.db.node.findMany({ ...usableQuery(query), where: nodeWhere(args.filter), orderBy: [...NODE_ORDER] }),
      totalCount: (_r, args, ctx) => ctx.db.node.count({ where: nodeWhere(args.filter) }),
    },
    {},
  ),
);

type InputFields = Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0];

/** Node fields a template may set too, for the nodes made from it (the same names and rules on both inputs). */
export const templatableNodeFields = (t: InputFields) => ({
  consoleType: t.field({ type: ConsoleTypeEnum, description: "The protocol the console speaks" }),
  consoleAutoStart: t.boolean({ description: "Whether a client should open the console when the node starts" }),
  settings: t.field({ type: NodeSettingsInput, description: "Typed emulator settings, the member of the node type; on update only the fields given change" }),
  portNameFormat: t.string({ description: "How port names are formed, e.g. Ethernet{0} or eth{port0}" }),
  portSegmentSize: t.int({ description: "Ports per segment for the {segment…} placeholders (0: one segment)" }),
  firstPortName: t.string({ description: "A name for the first port that overrides the format" }),
  customAdapters: t.field({ type: [CustomAdapterInput], description: "Per-adapter overrides of the port name, NIC model or MAC (replaces the current list)" }),
});

/** Fields a client may set on create and update. */
const settableFields = (t: InputFields) => ({
  ...templatableNodeFields(t),
  templateId: t.id({ description: "The template the node is made from (its global id, or its GNS3 template_id); its settings are the defaults" }),
  console: t.int({ description: "TCP console port; null on update frees it" }),
  properties: t.field({
    type: "JSON",
    description: `Emulator settings as GNS3 names them, only for node types without typed settings (${UNTYPED_NODE_TYPES}); merged into the current ones on update`,
  }),
  label: t.field({ type: NodeLabelInput, description: "Where and how the node's name is drawn" }),
  symbol: t.string({ description: "The icon drawn for the node (e.g. :/symbols/router.svg)" }),
  x: t.int({ description: "Horizontal position on the canvas, in pixels" }),
  y: t.int({ description: "Vertical position on the canvas, in pixels" }),
  z: t.int({ description: "Stacking order on the canvas: higher is drawn on top" }),
  locked: t.boolean({ description: "Pins the node on the canvas" }),
});

const CreateNodeInput = builder.inputType("CreateNodeInput", {
  description: "A new node: its project, name and type; every other setting has a default (the template's, if one is given)",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project the node is added to (its global id, or its GNS3 project_id; it must be opened)" }),
    name: t.string({ required: true, description: "Spaces are removed; a taken name is renumbered; {0} is a template" }),
    nodeType: t.field({ type: NodeTypeEnum, required: true, description: "What kind of device the node emulates" }),
    computeId: t.id({ defaultValue: "local", description: "The compute (emulation host) that runs the node (its global id, or its GNS3 compute_id; `local`: this server)" }),
    id: t.id({ description: "Chosen GNS3 node id (a UUID); a taken one is refused (ALREADY_EXISTS)" }),
    ...settableFields(t),
  }),
});
const UpdateNodeInput = builder.inputType("UpdateNodeInput", {
  description: "A node and changes to it: only the fields given change",
  fields: (t) => ({
    id: t.id({ required: true, description: "The node (its global id, or its GNS3 node_id)" }),
    name: t.string({ description: "A new name (a taken one is refused)" }),
    ...settableFields(t),
  }),
});

/** GraphQL null means "clear" where the node's input contract accepts null and "leave as is" elsewhere. */
const NULLABLE = new Set(Object.entries(nodeFields).flatMap(([field, rule]) => (rule.safeParse(null).success ? [field] : [])));
/** Input fields whose GraphQL form differs from the node's input contract. */
const TO_GNS3: Record<string, (v: unknown) => unknown> = {
  templateId: (v) => domainId(v as string, "Template", "templateId"),
  customAdapters: (v) => gns3Adapters(v as Parameters<typeof gns3Adapters>[0]),
  label: (v) => withDomainNames(v as Record<string, unknown>, LABEL_NAMES),
};
/**
 * GraphQL input onto the node's input contract, its settings aside: which settings apply depends on the node's type
 * (`withProperties`). The values are checked by the operation when it parses.
 */
function toChanges(input: Record<string, unknown>): NodeChanges {
  const { settings: _typed, properties: _json, ...fields } = input;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || (v === null && !NULLABLE.has(k))) continue;
    out[k] = v !== null && k in TO_GNS3 ? TO_GNS3[k](v) : v;
  }
  return out as NodeChanges;
}

type SettingsGiven = { settings?: Record<string, unknown> | null; properties?: unknown };
/** The changes with the GNS3 properties the input's settings (or JSON properties) set on a node of `nodeType`. */
const withProperties = (changes: NodeChanges, nodeType: string, input: SettingsGiven): NodeChanges => ({
  ...changes,
  properties: propertiesFromInput(nodeType, input.settings, input.properties, "properties") as NodeChanges["properties"],
});

builder.queryField("emulatedNode", (t) =>
  t.prismaField({
    type: "Node",
    nullable: true,
    description: lookupDescription("One node of an opened project", "ForbiddenError when its project is closed"),
    errors: { types: [ForbiddenError] },
    args: { id: t.arg.id({ required: true, description: "The node's id (its global id, or its GNS3 node_id)" }) },
    // The node with what the selection needs (its links, their endpoints…) in one planned read.
    resolve: (query, _r, args, ctx) =>
      orNull(async () => {
        const { projectId, id } = await nodeAddress(ctx, args.id);
        await getOpenedProject(ctx, projectId);
        return ctx.db.node.findFirst({ ...usableQuery(query), where: { id, projectId } });
      }),
  }),
);

/** The input of a mutation that acts on one node: `<Name>Input { id }`. */
export const nodeInput = (name: string) => idInput(name, `The node \`${name}\` acts on`, "The node's id (its global id, or its GNS3 node_id)");
const NodePayload = (name: string, what = "the node") =>
  payloadType<{ node: Node }>(name, `What \`${name}\` changed: ${what}`, (t) => ({
    node: t.field({ type: NodeRef, description: "The node as it is now", resolve: (p) => p.node }),
  }));

/**
 * What creating a node can fail with (createNode, duplicateNode, createNodeFromTemplate): those of a topology change,
 * and a remote compute that does not answer while the node is made there (its refusals are re-raised as ConflictError
 * or NotFoundError, as GNS3's controller does; never an UpstreamError).
 */
export const NODE_CREATE_ERRORS = [...TOPOLOGY_CHANGE_ERRORS, UnavailableError];

builder.mutationFields((t) => ({
  createNode: t.field({
    type: NodePayload("createNode", "the new node"),
    description: "Adds a node to an opened project (stopped; start it with startNode)",
    errors: mutationErrors("createNode", NODE_CREATE_ERRORS),
    args: { input: t.arg({ type: CreateNodeInput, required: true, description: "The new node" }) },
    resolve: async (_r, { input }, ctx) => {
      const { projectId, name, nodeType, computeId, id, ...rest } = input;
      const node = await createNode(ctx, projectIdArg(projectId), {
        ...withProperties(toChanges(rest), nodeType, rest),
        name,
        nodeType,
        computeId: domainId(computeId ?? "local", "Compute", "computeId"),
        nodeId: id == null ? undefined : domainId(id, "EmulatedNode", "id"),
      });
      return { node };
    },
  }),
  updateNode: t.field({
    type: NodePayload("updateNode"),
    description: "Changes a node's settings, name or place on the canvas",
    // A remote compute is told of the change after it is recorded, and its refusal is only logged.
    errors: mutationErrors("updateNode", TOPOLOGY_CHANGE_ERRORS),
    args: { input: t.arg({ type: UpdateNodeInput, required: true, description: "The node and the changes" }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, ...changes } = input;
      const at = await nodeAddress(ctx, id);
      if (changes.settings == null && changes.properties == null) return { node: await updateNode(ctx, at.projectId, at.id, toChanges(changes)) };
      // Which settings apply depends on the node's type: read only when settings are given (not for a move).
      const node = await ctx.db.node.findUnique({ where: { id: at.id }, select: { nodeType: true } });
      if (!node) throw new NotFoundError(`Node ID ${at.id} doesn't exist`);
      return { node: await updateNode(ctx, at.projectId, at.id, withProperties(toChanges(changes), node.nodeType, changes)) };
    },
  }),
  deleteNode: t.field({
    type: deletedPayload("deleteNode", "the node and the links that went with it"),
    description: "Deletes the node and its links",
    errors: mutationErrors("deleteNode", TOPOLOGY_CHANGE_ERRORS),
    args: { input: t.arg({ type: nodeInput("deleteNode"), required: true, description: "The node" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await nodeAddress(ctx, input.id);
      const links = await ctx.db.link.findMany({ where: { endpoints: { some: { nodeId: at.id } } }, select: { id: true } });
      await deleteNode(ctx, at.projectId, at.id);
      return { deletedIds: [globalId("EmulatedNode", at.id), ...links.map((l) => globalId("Link", l.id))] };
    },
  }),
}));

const DuplicateNodeInput = builder.inputType("DuplicateNodeInput", {
  description: "The node to copy and where the copy goes",
  fields: (t) => ({
    id: t.id({ required: true, description: "The node to copy (its global id, or its GNS3 node_id)" }),
    x: t.int({ required: true, description: "Horizontal position of the copy on the canvas, in pixels" }),
    y: t.int({ required: true, description: "Vertical position of the copy on the canvas, in pixels" }),
    z: t.int({ description: "Stacking order of the copy (the original's if omitted)" }),
  }),
});
const ProjectConsolesInput = builder.inputType("ResetProjectConsolesInput", {
  description: "The project whose consoles are reset",
  fields: (t) => ({ projectId: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id; an opened project)" }) }),
});

builder.mutationFields((t) => ({
  duplicateNode: t.field({
    type: NodePayload("duplicateNode", "the copy"),
    description: "A copy of the node (settings and files, new id, name renumbered) placed at (x, y, z)",
    errors: mutationErrors("duplicateNode", NODE_CREATE_ERRORS),
    args: { input: t.arg({ type: DuplicateNodeInput, required: true, description: "The node and the copy's place" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await nodeAddress(ctx, input.id);
      return { node: await duplicateNode(ctx, at.projectId, at.id, { x: input.x, y: input.y, z: input.z ?? undefined }) };
    },
  }),
  resetProjectConsoles: t.field({
    type: payloadType<{ project: Project }>("resetProjectConsoles", "What `resetProjectConsoles` acted on: the project", (f) => ({
      project: f.field({ type: ProjectRef, description: "The project whose consoles were reset", resolve: (p) => p.project }),
    })),
    description: "Resets the consoles of an opened project's nodes (nothing to drop here: emulators serve their consoles)",
    errors: mutationErrors("resetProjectConsoles", OPENED_PROJECT_ERRORS),
    args: { input: t.arg({ type: ProjectConsolesInput, required: true, description: "The project" }) },
    resolve: async (_r, { input }, ctx) => {
      const projectId = projectIdArg(input.projectId);
      await resetProjectConsoles(ctx, projectId);
      return { project: await getOpenedProject(ctx, projectId) };
    },
  }),
  resetNodeConsole: t.field({
    type: NodePayload("resetNodeConsole"),
    description: "Resets the node's console (drops its sessions so a client can reconnect)",
    errors: mutationErrors("resetNodeConsole", OPENED_PROJECT_ERRORS),
    args: { input: t.arg({ type: nodeInput("resetNodeConsole"), required: true, description: "The node" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await nodeAddress(ctx, input.id);
      return { node: await resetNodeConsole(ctx, at.projectId, at.id) };
    },
  }),
}));

/** Dynamips idle-PC values (GNS3's node routes); this server runs no Dynamips, so the operation refuses. */
const dynamipsNodeArg = (t: Parameters<Parameters<typeof builder.queryFields>[0]>[0]) => ({
  id: t.arg.id({ required: true, description: "The Dynamips node (its global id, or its GNS3 node_id; of an opened project)" }),
});
/** NOT_FOUND: no such node, or not a Dynamips one; CONFLICT: a Dynamips node, which this server cannot run. */
const IDLE_PC_ERRORS = { types: [InvalidInputError, NotFoundError, ConflictError, ForbiddenError], directResult: false as const };
builder.queryFields((t) => ({
  dynamipsAutoIdlePc: t.string({
    description: "The idle-PC value that keeps a Dynamips router's CPU use low (refused here: no Dynamips)",
    errors: IDLE_PC_ERRORS,
    args: dynamipsNodeArg(t),
    resolve: async (_r, a, ctx) => {
      const at = await nodeAddress(ctx, a.id);
      return idlePc(ctx, at.projectId, at.id, "auto_idlepc");
    },
  }),
  dynamipsIdlePcProposals: t.stringList({
    description: "Candidate idle-PC values for a Dynamips router (refused here: no Dynamips)",
    errors: IDLE_PC_ERRORS,
    args: dynamipsNodeArg(t),
    resolve: async (_r, a, ctx) => {
      const at = await nodeAddress(ctx, a.id);
      return idlePc(ctx, at.projectId, at.id, "idlepc_proposals");
    },
  }),
}));
