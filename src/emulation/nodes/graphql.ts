import "../projects/graphql.js"; // the Project type this file extends
import { builder, DOMAIN_ERRORS, usableQuery } from "../../platform/graphql/builder.js";
import { NotFoundError } from "../../platform/core/errors.js";
import { getOpenedProject } from "../projects/lookup.js";
import { resetNodeConsole, resetProjectConsoles } from "./console-reset.js";
import { duplicateNode } from "./duplicate.js";
import { idlePc } from "./dynamips.js";
import { createNode, deleteNode, updateNode } from "./operations.js";
import { projectDir } from "../projects/serialize.js";
import { nodePorts, type NodePort } from "../node-model/ports.js";
import { BUILTIN_TYPES, nodeDirectory, nodeProperties } from "../node-model/serialize.js";
import { nodeFields, type NodeChanges } from "./schema.js";
import { CONSOLE_TYPES, NODE_STATUSES, NODE_TYPES } from "../node-model/vocabularies.js";

/** The project directory an event's node carries (see notifications/graphql.ts), if it is one. */
const eventProjectDir = (n: object): string | undefined => ((n as { [EVENT_PROJECT_DIR]?: string })[EVENT_PROJECT_DIR]);
/** Where an event's node keeps the project directory the event carries. */
export const EVENT_PROJECT_DIR = Symbol("projectDir");

/** GraphQL enum values for GNS3 vocabularies: `spice+agent` → SPICE_AGENT, value kept as GNS3 spells it. */
export const enumValues = <T extends string>(values: readonly T[]) =>
  Object.fromEntries(values.map((v) => [v.toUpperCase().replace(/[^A-Z0-9]/g, "_"), { value: v }])) as Record<string, { value: T }>;

export const NodeTypeEnum = builder.enumType("NodeType", { values: enumValues(NODE_TYPES) });
const NodeStatusEnum = builder.enumType("NodeStatus", { values: enumValues(NODE_STATUSES) });
const ConsoleTypeEnum = builder.enumType("ConsoleType", { values: enumValues(CONSOLE_TYPES) });
export const LinkTypeEnum = builder.enumType("LinkType", { values: enumValues(["ethernet", "serial"] as const) });

const NodePortType = builder.objectRef<NodePort>("NodePort").implement({
  description: "A network interface of a node; links attach to (adapterNumber, portNumber)",
  fields: (t) => ({
    name: t.exposeString("name"),
    shortName: t.exposeString("short_name"),
    adapterNumber: t.exposeInt("adapter_number"),
    portNumber: t.exposeInt("port_number"),
    linkType: t.field({ type: LinkTypeEnum, resolve: (p) => p.link_type }),
    dataLinkTypes: t.field({ type: "JSON", description: "Capture link types, e.g. {Ethernet: DLT_EN10MB}", resolve: (p) => p.data_link_types }),
    adapterType: t.string({ nullable: true, description: "The emulated NIC of an adapter port (qemu: e1000 …)", resolve: (p) => p.adapter_type ?? null }),
    macAddress: t.string({ nullable: true, description: "The adapter's MAC (qemu: the node's base MAC plus the adapter number)", resolve: (p) => p.mac_address ?? null }),
  }),
});

const NodeLabelInput = builder.inputType("NodeLabelInput", {
  description: "Where the node name is drawn; the text is always the node name",
  fields: (t) => ({ style: t.string(), x: t.int(), y: t.int(), rotation: t.int() }),
});

export const NodeRef = builder.prismaObject("Node", {
  name: "EmulatedNode",
  description: "A device in a project (named EmulatedNode because Node is the Relay interface)",
  fields: (t) => ({
    id: t.exposeID("id"),
    projectId: t.exposeID("projectId"),
    project: t.relation("project", { description: "The project the node belongs to" }),
    computeId: t.exposeString("computeId"),
    templateId: t.exposeString("templateId", { nullable: true }),
    nodeType: t.field({ type: NodeTypeEnum, resolve: (n) => n.nodeType as (typeof NODE_TYPES)[number] }),
    name: t.exposeString("name"),
    status: t.field({ type: NodeStatusEnum, resolve: (n) => n.status as (typeof NODE_STATUSES)[number] }),
    console: t.exposeInt("console", { nullable: true }),
    consoleHost: t.exposeString("consoleHost", { nullable: true }),
    consoleType: t.field({ type: ConsoleTypeEnum, nullable: true, resolve: (n) => n.consoleType as (typeof CONSOLE_TYPES)[number] | null }),
    consoleAutoStart: t.exposeBoolean("consoleAutoStart"),
    commandLine: t.exposeString("commandLine", { nullable: true }),
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
    properties: t.field({ type: "JSON", description: "Emulator-specific settings", resolve: (n) => nodeProperties(n) }),
    label: t.field({ type: "JSON", resolve: (n) => ({ ...JSON.parse(n.labelJson), text: n.name }) }),
    symbol: t.exposeString("symbol", { nullable: true }),
    width: t.exposeInt("width"),
    height: t.exposeInt("height"),
    x: t.exposeInt("x"),
    y: t.exposeInt("y"),
    z: t.exposeInt("z"),
    locked: t.exposeBoolean("locked"),
    portNameFormat: t.exposeString("portNameFormat"),
    portSegmentSize: t.exposeInt("portSegmentSize"),
    firstPortName: t.exposeString("firstPortName", { nullable: true }),
    customAdapters: t.field({ type: "JSON", resolve: (n) => JSON.parse(n.customAdapters) }),
    ports: t.field({ type: [NodePortType], resolve: (n) => nodePorts({ ...n, properties: nodeProperties(n) }) }),
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
  ...(f?.project != null ? { projectId: String(f.project) } : {}),
});
const NODE_ORDER = [{ createdAt: "asc" }, { id: "asc" }] as const;

builder.prismaObjectFields("Project", (t) => ({
  // Planned with the project (one statement per level for a page of projects), the count with it.
  nodes: t.relatedConnection("nodes", {
    cursor: "id",
    description: "The project's nodes in creation order",
    args: { filter: t.arg({ type: ProjectNodeFilter }) },
    query: (args) => ({ where: nodeWhere(args.filter), orderBy: [...NODE_ORDER] }),
    totalCount: true,
  }),
}));

builder.queryField("nodes", (t) =>
  t.prismaConnection(
    {
      type: "Node",
      cursor: "id",
      description: "Nodes across all projects, in creation order (e.g. every started node: filter {status: STARTED})",
      args: { filter: t.arg({ type: NodeFilter }) },
      resolve: (query, _r, args, ctx) => ctx.db.node.findMany({ ...usableQuery(query), where: nodeWhere(args.filter), orderBy: [...NODE_ORDER] }),
      totalCount: (_r, args, ctx) => ctx.db.node.count({ where: nodeWhere(args.filter) }),
    },
    {},
  ),
);

/** Fields a client may set on create and update. */
const settableFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  templateId: t.id(),
  console: t.int({ description: "TCP console port; null on update frees it" }),
  consoleType: t.field({ type: ConsoleTypeEnum }),
  consoleAutoStart: t.boolean(),
  properties: t.field({ type: "JSON", description: "Emulator settings; merged into the current ones on update" }),
  label: t.field({ type: NodeLabelInput }),
  symbol: t.string(),
  x: t.int(),
  y: t.int(),
  z: t.int(),
  locked: t.boolean(),
  portNameFormat: t.string(),
  portSegmentSize: t.int(),
  firstPortName: t.string(),
  customAdapters: t.field({ type: "JSON" }),
});

const CreateNodeInput = builder.inputType("CreateNodeInput", {
  fields: (t) => ({
    projectId: t.id({ required: true }),
    name: t.string({ required: true, description: "Spaces are removed; a taken name is renumbered; {0} is a template" }),
    nodeType: t.field({ type: NodeTypeEnum, required: true }),
    computeId: t.id({ defaultValue: "local" }),
    id: t.id({ description: "Chosen node id (UUID)" }),
    ...settableFields(t),
  }),
});
const UpdateNodeInput = builder.inputType("UpdateNodeInput", {
  fields: (t) => ({ name: t.string(), ...settableFields(t) }),
});

/** GraphQL null means "clear" where the node's input contract accepts null and "leave as is" elsewhere. */
const NULLABLE = new Set(Object.entries(nodeFields).flatMap(([field, rule]) => (rule.safeParse(null).success ? [field] : [])));
/** GraphQL input onto the node's input contract; the JSON values are checked by the operation when it parses. */
function toChanges(input: Record<string, unknown>): NodeChanges {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined || (v === null && !NULLABLE.has(k))) continue;
    out[k] = k === "templateId" && v !== null ? String(v) : v;
  }
  return out as NodeChanges;
}

builder.queryField("emulatedNode", (t) =>
  t.prismaField({
    type: "Node",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    // The node with what the selection needs (its links, their endpoints…) in one planned read.
    resolve: async (query, _r, args, ctx) => {
      await getOpenedProject(ctx, String(args.projectId));
      const node = await ctx.db.node.findFirst({ ...usableQuery(query), where: { id: String(args.id), projectId: String(args.projectId) } });
      if (!node) throw new NotFoundError(`Node ID ${args.id} doesn't exist`);
      return node;
    },
  }),
);

builder.mutationFields((t) => ({
  createNode: t.prismaField({
    type: "Node",
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: CreateNodeInput, required: true }) },
    resolve: (_q, _r, { input }, ctx) => {
      const { projectId, name, nodeType, computeId, id, ...rest } = input;
      return createNode(ctx, String(projectId), {
        ...toChanges(rest),
        name,
        nodeType,
        computeId: computeId ?? "local",
        nodeId: id == null ? undefined : String(id),
      });
    },
  }),
  updateNode: t.prismaField({
    type: "Node",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), input: t.arg({ type: UpdateNodeInput, required: true }) },
    resolve: (_q, _r, { projectId, id, input }, ctx) => updateNode(ctx, String(projectId), String(id), toChanges(input)),
  }),
  deleteNode: t.field({
    type: "ID",
    description: "Deletes the node and its links; returns the deleted node's id",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_r, { projectId, id }, ctx) => {
      await deleteNode(ctx, String(projectId), String(id));
      return String(id);
    },
  }),
}));

builder.mutationFields((t) => ({
  duplicateNode: t.prismaField({
    type: "Node",
    description: "A copy of the node (settings and files, new id, name renumbered) placed at (x, y, z)",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), x: t.arg.int({ required: true }), y: t.arg.int({ required: true }), z: t.arg.int() },
    resolve: (_q, _r, { projectId, id, x, y, z }, ctx) => duplicateNode(ctx, String(projectId), String(id), { x, y, z: z ?? undefined }),
  }),
  resetProjectConsoles: t.boolean({
    description: "Resets the consoles of an opened project's nodes (nothing to drop here: emulators serve their consoles)",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }) },
    resolve: async (_r, { projectId }, ctx) => {
      await resetProjectConsoles(ctx, String(projectId));
      return true;
    },
  }),
  resetNodeConsole: t.prismaField({
    type: "Node",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_q, _r, { projectId, id }, ctx) => resetNodeConsole(ctx, String(projectId), String(id)),
  }),
}));

/** Dynamips idle-PC values (GNS3's node routes); this server runs no Dynamips, so the operation refuses. */
builder.queryFields((t) => ({
  dynamipsAutoIdlePc: t.string({
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), nodeId: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => idlePc(ctx, String(a.projectId), String(a.nodeId), "auto_idlepc"),
  }),
  dynamipsIdlePcProposals: t.stringList({
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), nodeId: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => idlePc(ctx, String(a.projectId), String(a.nodeId), "idlepc_proposals"),
  }),
}));
