import "../nodes/graphql.js"; // EmulatedNode and the enums
import { batchLoad } from "../../platform/graphql/batch-load.js";
import type { Link } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { builder, usableQuery } from "../../platform/graphql/builder.js";
import { withDomainNames } from "../../platform/graphql/domain-names.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { deletedPayload, idInput, mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { itemAddress } from "../projects/address.js";
import { projectIdArg } from "../projects/graphql.js";
import { computeById, LABEL_NAMES, LabelRef, LinkTypeEnum } from "../nodes/graphql.js";
import { ComputeRef } from "../computes/graphql.js";
import { getOpenedProject, OPENED_PROJECT_ERRORS, TOPOLOGY_CHANGE_ERRORS } from "../projects/lookup.js";
import { createLink, deleteLink, updateLink } from "./operations.js";
import { AVAILABLE_FILTERS, FILTERING_NODE_TYPES } from "./filters.js";
import { ForbiddenError, NotFoundError } from "../../platform/core/errors.js";
import type { LinkChanges, LinkEndpointInput } from "./schema.js";

type StoredStyle = { color?: unknown; width?: unknown; type?: unknown };
const LinkStyleRef = builder.objectRef<StoredStyle>("LinkStyle").implement({
  description: "How a link's wire is drawn; a field without a value is drawn the GUI's default way",
  fields: (t) => ({
    color: t.string({ nullable: true, description: "The wire's colour (CSS, e.g. #ff0000)", resolve: (s) => (typeof s.color === "string" ? s.color : null) }),
    widthPixels: t.int({ nullable: true, description: "The wire's width, in pixels", resolve: (s) => (typeof s.width === "number" ? Math.round(s.width) : null) }),
    type: t.int({ nullable: true, description: "The dash pattern: 1 solid, 2 dashed, 3 dotted, 4 dash-dot, 5 dash-dot-dot (Qt pen styles)", resolve: (s) => (typeof s.type === "number" ? Math.round(s.type) : null) }),
  }),
});

/** A link's active filters as stored: the filter's name → its values, in its parameters' order (filters.ts). */
type StoredFilters = Partial<Record<string, (number | string)[]>>;
const intAt = (f: StoredFilters, type: string, i = 0) => {
  const v = f[type]?.[i];
  return typeof v === "number" ? v : null;
};
const LinkDelayRef = builder.objectRef<{ latencyMs: number; jitterMs: number | null }>("LinkDelay").implement({
  description: "Packets held back before they go on",
  fields: (t) => ({
    latencyMs: t.exposeInt("latencyMs", { description: "The delay, in milliseconds" }),
    jitterMs: t.exposeInt("jitterMs", { nullable: true, description: "A random variation of the delay, in milliseconds (+/-)" }),
  }),
});
const LinkFiltersRef = builder.objectRef<StoredFilters>("LinkFilters").implement({
  description: "The packet filters active on a link, each null while it is off (set through the `filters` input of createLink and updateLink)",
  fields: (t) => ({
    frequencyDrop: t.int({ nullable: true, description: "Drops every Nth packet (N above 0), or every packet (-1)", resolve: (f) => intAt(f, "frequency_drop") }),
    packetLossPercent: t.int({ nullable: true, description: "The chance a packet is lost, in percent", resolve: (f) => intAt(f, "packet_loss") }),
    delay: t.field({
      type: LinkDelayRef,
      nullable: true,
      description: "Packets held back",
      resolve: (f) => (intAt(f, "delay") === null ? null : { latencyMs: intAt(f, "delay")!, jitterMs: intAt(f, "delay", 1) }),
    }),
    corruptPercent: t.int({ nullable: true, description: "The chance a packet is corrupted, in percent", resolve: (f) => intAt(f, "corrupt") }),
    bpf: t.string({
      nullable: true,
      description: "Berkeley Packet Filter expressions, one a line: a packet matching any of them is dropped",
      resolve: (f) => (typeof f.bpf?.[0] === "string" ? f.bpf[0] : null),
    }),
  }),
});

export const LinkRef = builder.prismaNode("Link", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A cable between two node ports (one end while it is being drawn)",
  id: { field: "id", description: "The link's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    linkId: t.exposeID("id", { description: "The link's GNS3 id (a UUID): the `link_id` of the REST API and the GNS3 GUI" }),
    project: t.relation("project", { description: "The project the link belongs to" }),
    linkType: t.field({ type: LinkTypeEnum, description: "The kind of wire: Ethernet or serial", resolve: (l) => l.linkType as "ethernet" | "serial" }),
    // Planned with the link (one statement per level for a whole list). A link that was not (an event's, a
    // mutation's answer) answers with the endpoints it carries, else one batched read for all such links.
    endpoints: t.relation("endpoints", {
      description: "The link's ends (two once it is connected): the node ports it joins",
      query: { orderBy: { position: "asc" } },
      resolve: (query, link, _a, ctx) =>
        "endpoints" in link && Array.isArray(link.endpoints)
          ? link.endpoints
          : batchLoad(ctx, "Link.endpoints", query, link.id, (ids) => ctx.db.linkEndpoint.findMany({ ...query, where: { linkId: { in: ids } } }), (e) => e.linkId),
    }),
    filters: t.field({ type: LinkFiltersRef, description: "The packet filters the link applies: loss, delay, corruption, drops", resolve: (l) => JSON.parse(l.filtersJson) as StoredFilters }),
    linkStyle: t.field({ type: LinkStyleRef, description: "How the wire is drawn", resolve: (l) => JSON.parse(l.linkStyleJson) as StoredStyle }),
    suspend: t.exposeBoolean("suspend", { description: "Whether the link is suspended: the cable stays drawn but carries no traffic" }),
    capturing: t.exposeBoolean("capturing", { description: "Whether the link's packets are being captured to a file" }),
    captureFileName: t.exposeString("captureFileName", { nullable: true, description: "The capture file's name (.pcap), while capturing" }),
    captureFilePath: t.exposeString("captureFilePath", { nullable: true, description: "The capture file's path on the compute, while capturing" }),
    captureCompute: t.field({
      type: ComputeRef,
      nullable: true,
      description: "The compute that writes the capture, while capturing",
      select: { captureComputeId: true },
      resolve: (l, _a, ctx) => (l.captureComputeId ? computeById(ctx, l.captureComputeId) : null),
    }),
  }),
});

builder.prismaObject("LinkEndpoint", {
  description: "One end of a link: a node port and the label drawn next to it",
  fields: (t) => ({
    node: t.relation("node", {
      description: "The node this end is plugged into",
      // Unplanned (an event's endpoint carries its node as it was): one batched read by node id.
      resolve: async (query, e, _a, ctx) => {
        if ("node" in e && e.node) return e.node as never;
        const [node] = await batchLoad(ctx, "LinkEndpoint.node", query, e.nodeId, (ids) => ctx.db.node.findMany({ ...query, where: { id: { in: ids } } }), (n) => n.id);
        if (!node) throw new NotFoundError(`Node ID ${e.nodeId} doesn't exist`);
        return node;
      },
    }),
    adapterNumber: t.exposeInt("adapterNumber", { description: "The node's adapter this end is plugged into, from 0" }),
    portNumber: t.exposeInt("portNumber", { description: "The port on that adapter, from 0" }),
    label: t.field({ type: LabelRef, description: "The text drawn next to this end (the port's name, by default)", resolve: (e) => JSON.parse(e.labelJson) as Record<string, unknown> }),
  }),
});

builder.prismaObjectFields("Project", (t) => ({
  links: t.relatedConnection("links", {
    cursor: "id",
    description: "The project's links in creation order",
    query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
    totalCount: true,
  }),
}));

const LinkEndLabelInput = builder.inputType("LinkEndLabelInput", {
  description: "The text drawn at a link's end, and how (what is not given takes the GUI's default)",
  fields: (t) => ({
    text: t.string({ description: "The text (the port's short name, by default)" }),
    style: t.string({ description: "SVG text style (font-family, font-size, fill …)" }),
    x: t.int({ description: "Offset from the end's anchor, in pixels" }),
    y: t.int({ description: "Offset from the end's anchor, in pixels" }),
    rotationDegrees: t.int({ description: "Rotation, in degrees (-359 to 360)" }),
  }),
});
const LinkEndInput = builder.inputType("LinkEndInput", {
  description: "One end of a link: the node port it plugs into",
  fields: (t) => ({
    nodeId: t.id({ required: true, description: "The node (its global id, or its GNS3 node_id)" }),
    adapterNumber: t.int({ required: true, description: "The node's adapter, from 0 (see EmulatedNode.ports)" }),
    portNumber: t.int({ required: true, description: "The port on that adapter, from 0" }),
    label: t.field({ type: LinkEndLabelInput, description: "The text drawn at this end (the port's short name, by default)" }),
  }),
});
const LinkStyleInput = builder.inputType("LinkStyleInput", {
  description: "How a link's wire is drawn; what is not given is drawn the GUI's default way",
  fields: (t) => ({
    color: t.string({ description: "The wire's colour (CSS, e.g. #ff0000)" }),
    widthPixels: t.int({ description: "The wire's width, in pixels" }),
    type: t.int({ description: "The dash pattern: 1 solid, 2 dashed, 3 dotted, 4 dash-dot, 5 dash-dot-dot (Qt pen styles)" }),
  }),
});
const LinkDelayInput = builder.inputType("LinkDelayInput", {
  description: "Packets held back before they go on",
  fields: (t) => ({
    latencyMs: t.int({ required: true, description: "The delay, in milliseconds (0: off)" }),
    jitterMs: t.int({ description: "A random variation of the delay, in milliseconds (+/-)" }),
  }),
});
const LinkFiltersInput = builder.inputType("LinkFiltersInput", {
  description: "The packet filters a link applies (see Link.availableFilters): the whole set, a filter not given is off",
  fields: (t) => ({
    frequencyDrop: t.int({ description: "Drops every Nth packet (N above 0), or every packet (-1); 0: off" }),
    packetLossPercent: t.int({ description: "The chance a packet is lost, in percent; 0: off" }),
    delay: t.field({ type: LinkDelayInput, description: "Packets held back" }),
    corruptPercent: t.int({ description: "The chance a packet is corrupted, in percent; 0: off" }),
    bpf: t.string({ description: "Drops the packets this BPF expression matches; empty: off" }),
  }),
});

const linkSettings = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  filters: t.field({ type: LinkFiltersInput, description: "The packet filters the link applies (replaces the current set)" }),
  linkStyle: t.field({ type: LinkStyleInput, description: "How the wire is drawn" }),
  suspend: t.boolean({ description: "Suspends the link (no traffic) or resumes it" }),
});

const CreateLinkInput = builder.inputType("CreateLinkInput", {
  description: "A new cable: its project and the ports it joins",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id; an opened project)" }),
    id: t.id({ description: "Chosen GNS3 link id (a UUID); a taken one is refused (ALREADY_EXISTS); a new one when absent" }),
    ends: t.field({ type: [LinkEndInput], required: true, description: "The ports the link joins (two; one while it is being drawn)" }),
    ...linkSettings(t),
  }),
});
const UpdateLinkInput = builder.inputType("UpdateLinkInput", {
  description: "A link and changes to it: only the fields given change (its ends cannot be moved)",
  fields: (t) => ({
    id: t.id({ required: true, description: "The link (its global id, or its GNS3 link_id)" }),
    endLabels: t.field({ type: [LinkEndInput], description: "Only the labels are used" }),
    ...linkSettings(t),
  }),
});

/** GraphQL input onto the link's input contract (GNS3's shapes), which the operation checks as it does REST's. */
type Ends = { nodeId: string | number; adapterNumber: number; portNumber: number; label?: Record<string, unknown> | null }[] | null | undefined;
const toEnds = (ends: Ends): LinkEndpointInput[] | undefined =>
  ends?.map((e) => ({
    nodeId: domainId(e.nodeId, "EmulatedNode", "ends.nodeId"),
    adapterNumber: e.adapterNumber,
    portNumber: e.portNumber,
    label: (e.label ? given(withDomainNames(e.label, LABEL_NAMES)) : undefined) as LinkEndpointInput["label"],
  }));

/** The fields a client gave (GraphQL passes an omitted optional input field as undefined, an explicit one as null). */
const given = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v != null));

type FiltersInput = typeof LinkFiltersInput.$inferInput;
/** Typed filters onto GNS3's stored form (name → values in the filter's parameter order, filters.ts). */
function gns3Filters(f: FiltersInput): Record<string, (number | string)[]> {
  const out: Record<string, (number | string)[]> = {};
  if (f.frequencyDrop != null) out.frequency_drop = [f.frequencyDrop];
  if (f.packetLossPercent != null) out.packet_loss = [f.packetLossPercent];
  if (f.delay) out.delay = f.delay.jitterMs == null ? [f.delay.latencyMs] : [f.delay.latencyMs, f.delay.jitterMs];
  if (f.corruptPercent != null) out.corrupt = [f.corruptPercent];
  if (f.bpf != null) out.bpf = [f.bpf];
  return out;
}

const toChanges = (i: { filters?: FiltersInput | null; linkStyle?: Record<string, unknown> | null; suspend?: boolean | null }): LinkChanges => ({
  filters: (i.filters ? gns3Filters(i.filters) : undefined) as LinkChanges["filters"],
  linkStyle: (i.linkStyle ? given(withDomainNames(i.linkStyle, { widthPixels: "width" })) : undefined) as LinkChanges["linkStyle"],
  suspend: i.suspend ?? undefined,
});

type FilterSpec = (typeof AVAILABLE_FILTERS)[number];
type FilterParameter = FilterSpec["parameters"][number] & { minimum?: number; maximum?: number; unit?: string };

const LinkFilterParameter = builder.objectRef<FilterParameter>("LinkFilterParameter").implement({
  description: "One value a packet filter takes (its position in the filter's list is its order here)",
  fields: (t) => ({
    name: t.exposeString("name", { description: "What the value sets, for a person to read" }),
    type: t.exposeString("type", { description: "int or text" }),
    minimum: t.exposeInt("minimum", { nullable: true, description: "The smallest value accepted (int only)" }),
    maximum: t.exposeInt("maximum", { nullable: true, description: "The largest value accepted (int only)" }),
    unit: t.exposeString("unit", { nullable: true, description: "The value's unit (ms, %…), if it has one" }),
  }),
});
const LinkFilterSpec = builder.objectRef<FilterSpec>("LinkFilterSpec").implement({
  description: "A packet filter a link can apply; its values go under `type` in the link's filters",
  fields: (t) => ({
    type: t.exposeString("type", { description: "The filter's key in a link's filters (delay, packet_loss …)" }),
    name: t.exposeString("name", { description: "The filter's name, for a person to read" }),
    description: t.exposeString("description", { description: "What the filter does to the link's packets" }),
    parameters: t.field({ type: [LinkFilterParameter], description: "The values the filter takes, in order", resolve: (f) => f.parameters as readonly FilterParameter[] }),
  }),
});

builder.prismaObjectField("Link", "availableFilters", (t) =>
  t.field({
    type: [LinkFilterSpec],
    description: "The filters this link supports (none unless an end is a node type that filters)",
    // The ends' node types, planned with the link.
    select: { endpoints: { select: { node: { select: { nodeType: true } } } } },
    resolve: (l) => (l.endpoints.some((e) => FILTERING_NODE_TYPES.has(e.node.nodeType)) ? AVAILABLE_FILTERS : []),
  }),
);

builder.prismaObjectField("Node", "links", (t) =>
  t.field({
    type: [LinkRef],
    description: "The links attached to the node, in creation order",
    // Through the node's endpoints, planned with the node: one statement per level for a whole list of nodes.
    select: (_args, _ctx, nested) => ({
      endpoints: { orderBy: [{ link: { createdAt: "asc" } }, { linkId: "asc" }], select: { link: nested(true) } },
    }),
    resolve: (n) => {
      const seen = new Set<string>();
      return n.endpoints.map((e) => e.link).filter((l) => !seen.has(l.id) && seen.add(l.id));
    },
  }),
);

/** The link an argument names (its global id or its GNS3 id) and its project; NotFoundError when there is none. */
export const linkAddress = (ctx: AppContext, id: string | number) =>
  itemAddress(id, "Link", (linkId) => ctx.db.link.findUnique({ where: { id: linkId }, select: { projectId: true } }));

builder.queryField("link", (t) =>
  t.prismaField({
    type: "Link",
    nullable: true,
    description: lookupDescription("One link of an opened project", "ForbiddenError when its project is closed"),
    errors: { types: [ForbiddenError] },
    args: { id: t.arg.id({ required: true, description: "The link's id (its global id, or its GNS3 link_id)" }) },
    resolve: (query, _r, args, ctx) =>
      orNull(async () => {
        const at = await linkAddress(ctx, args.id);
        await getOpenedProject(ctx, at.projectId);
        return ctx.db.link.findFirst({ ...usableQuery(query), where: { id: at.id, projectId: at.projectId } });
      }),
  }),
);

const LinkPayload = (name: string, what = "the link") =>
  payloadType<{ link: Link }>(name, `What \`${name}\` changed: ${what}`, (t) => ({
    link: t.field({ type: LinkRef, description: "The link as it is now", resolve: (p) => p.link }),
  }));

builder.mutationFields((t) => ({
  createLink: t.field({
    type: LinkPayload("createLink", "the new link"),
    description: "Connects up to two ports; link.created is announced once both ends are attached",
    errors: mutationErrors("createLink", TOPOLOGY_CHANGE_ERRORS),
    args: { input: t.arg({ type: CreateLinkInput, required: true, description: "The new link" }) },
    resolve: async (_r, { input }, ctx) => ({
      link: await createLink(ctx, projectIdArg(input.projectId), {
        ...toChanges(input),
        nodes: toEnds(input.ends),
        linkId: input.id == null ? undefined : domainId(input.id, "Link", "id"),
      }),
    }),
  }),
  updateLink: t.field({
    type: LinkPayload("updateLink"),
    description: "Changes a link's filters, style, suspension or end labels",
    errors: mutationErrors("updateLink", OPENED_PROJECT_ERRORS),
    args: { input: t.arg({ type: UpdateLinkInput, required: true, description: "The link and the changes" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await linkAddress(ctx, input.id);
      return { link: await updateLink(ctx, at.projectId, at.id, { ...toChanges(input), nodes: toEnds(input.endLabels) }) };
    },
  }),
  deleteLink: t.field({
    type: deletedPayload("deleteLink", "the link"),
    description: "Unplugs and removes a link",
    errors: mutationErrors("deleteLink", OPENED_PROJECT_ERRORS),
    args: { input: t.arg({ type: idInput("deleteLink", "The link `deleteLink` removes", "The link's id (its global id, or its GNS3 link_id)"), required: true, description: "The link" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await linkAddress(ctx, input.id);
      await deleteLink(ctx, at.projectId, at.id);
      return { deletedIds: [globalId("Link", at.id)] };
    },
  }),
}));
