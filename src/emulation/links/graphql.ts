import "../nodes/graphql.js"; // EmulatedNode and the enums
import { batchLoad } from "../../platform/graphql/batch-load.js";
import { builder, DOMAIN_ERRORS, usableQuery } from "../../platform/graphql/builder.js";
import { LinkTypeEnum } from "../nodes/graphql.js";
import { getOpenedProject } from "../projects/lookup.js";
import { createLink, deleteLink, updateLink } from "./operations.js";
import { AVAILABLE_FILTERS, FILTERING_NODE_TYPES } from "./filters.js";
import { NotFoundError } from "../../platform/core/errors.js";
import type { LinkChanges, LinkEndpointInput } from "./schema.js";

export const LinkRef = builder.prismaObject("Link", {
  description: "A cable between two node ports (one end while it is being drawn)",
  fields: (t) => ({
    id: t.exposeID("id"),
    projectId: t.exposeID("projectId"),
    linkType: t.field({ type: LinkTypeEnum, resolve: (l) => l.linkType as "ethernet" | "serial" }),
    // Planned with the link (one statement per level for a whole list). A link that was not (an event's, a
    // mutation's answer) answers with the endpoints it carries, else one batched read for all such links.
    endpoints: t.relation("endpoints", {
      query: { orderBy: { position: "asc" } },
      resolve: (query, link, _a, ctx) =>
        "endpoints" in link && Array.isArray(link.endpoints)
          ? link.endpoints
          : batchLoad(ctx, "Link.endpoints", query, link.id, (ids) => ctx.db.linkEndpoint.findMany({ ...query, where: { linkId: { in: ids } } }), (e) => e.linkId),
    }),
    filters: t.field({ type: "JSON", description: "Active packet filters, e.g. {delay: [10, 2]}", resolve: (l) => JSON.parse(l.filtersJson) }),
    linkStyle: t.field({ type: "JSON", resolve: (l) => JSON.parse(l.linkStyleJson) }),
    suspend: t.exposeBoolean("suspend"),
    capturing: t.exposeBoolean("capturing"),
    captureFileName: t.exposeString("captureFileName", { nullable: true }),
    captureFilePath: t.exposeString("captureFilePath", { nullable: true }),
    captureComputeId: t.exposeString("captureComputeId", { nullable: true }),
  }),
});

builder.prismaObject("LinkEndpoint", {
  description: "One end of a link: a node port and the label drawn next to it",
  fields: (t) => ({
    node: t.relation("node", {
      // Unplanned (an event's endpoint carries its node as it was): one batched read by node id.
      resolve: async (query, e, _a, ctx) => {
        if ("node" in e && e.node) return e.node as never;
        const [node] = await batchLoad(ctx, "LinkEndpoint.node", query, e.nodeId, (ids) => ctx.db.node.findMany({ ...query, where: { id: { in: ids } } }), (n) => n.id);
        if (!node) throw new NotFoundError(`Node ID ${e.nodeId} doesn't exist`);
        return node;
      },
    }),
    adapterNumber: t.exposeInt("adapterNumber"),
    portNumber: t.exposeInt("portNumber"),
    label: t.field({ type: "JSON", resolve: (e) => JSON.parse(e.labelJson) }),
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

const LinkEndInput = builder.inputType("LinkEndInput", {
  fields: (t) => ({
    nodeId: t.id({ required: true }),
    adapterNumber: t.int({ required: true }),
    portNumber: t.int({ required: true }),
    label: t.field({ type: "JSON", description: "Defaults to {text: '<adapter>/<port>', style: ...}" }),
  }),
});

const linkSettings = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  filters: t.field({ type: "JSON", description: "frequency_drop, packet_loss, delay, corrupt, bpf; a first value of 0 or '' disables one" }),
  linkStyle: t.field({ type: "JSON", description: "{color, width, type}" }),
  suspend: t.boolean(),
});

const CreateLinkInput = builder.inputType("CreateLinkInput", {
  fields: (t) => ({
    projectId: t.id({ required: true }),
    id: t.id({ description: "A UUID chosen by the client; a new one when absent" }),
    ends: t.field({ type: [LinkEndInput], required: true }),
    ...linkSettings(t),
  }),
});
const UpdateLinkInput = builder.inputType("UpdateLinkInput", {
  fields: (t) => ({ endLabels: t.field({ type: [LinkEndInput], description: "Only the labels are used" }), ...linkSettings(t) }),
});

/** GraphQL input onto the link's input contract; the JSON values are checked by the operation when it parses. */
type Ends = { nodeId: string | number; adapterNumber: number; portNumber: number; label?: unknown }[] | null | undefined;
const toEnds = (ends: Ends): LinkEndpointInput[] | undefined =>
  ends?.map((e) => ({ nodeId: String(e.nodeId), adapterNumber: e.adapterNumber, portNumber: e.portNumber, label: (e.label ?? undefined) as LinkEndpointInput["label"] }));

const toChanges = (i: { filters?: unknown; linkStyle?: unknown; suspend?: boolean | null }): LinkChanges => ({
  filters: (i.filters ?? undefined) as LinkChanges["filters"],
  linkStyle: (i.linkStyle ?? undefined) as LinkChanges["linkStyle"],
  suspend: i.suspend ?? undefined,
});

type FilterSpec = (typeof AVAILABLE_FILTERS)[number];
type FilterParameter = FilterSpec["parameters"][number] & { minimum?: number; maximum?: number; unit?: string };

const LinkFilterParameter = builder.objectRef<FilterParameter>("LinkFilterParameter").implement({
  fields: (t) => ({
    name: t.exposeString("name"),
    type: t.exposeString("type", { description: "int or text" }),
    minimum: t.exposeInt("minimum", { nullable: true }),
    maximum: t.exposeInt("maximum", { nullable: true }),
    unit: t.exposeString("unit", { nullable: true }),
  }),
});
const LinkFilterSpec = builder.objectRef<FilterSpec>("LinkFilterSpec").implement({
  description: "A packet filter a link can apply; its values go under `type` in the link's filters",
  fields: (t) => ({
    type: t.exposeString("type"),
    name: t.exposeString("name"),
    description: t.exposeString("description"),
    parameters: t.field({ type: [LinkFilterParameter], resolve: (f) => f.parameters as readonly FilterParameter[] }),
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

builder.queryField("link", (t) =>
  t.prismaField({
    type: "Link",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (query, _r, args, ctx) => {
      await getOpenedProject(ctx, String(args.projectId));
      const link = await ctx.db.link.findFirst({ ...usableQuery(query), where: { id: String(args.id), projectId: String(args.projectId) } });
      if (!link) throw new NotFoundError(`Link ID ${args.id} doesn't exist`);
      return link;
    },
  }),
);

builder.mutationFields((t) => ({
  createLink: t.prismaField({
    type: "Link",
    description: "Connects up to two ports; link.created is announced once both ends are attached",
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: CreateLinkInput, required: true }) },
    resolve: (_q, _r, { input }, ctx) =>
      createLink(ctx, String(input.projectId), { ...toChanges(input), nodes: toEnds(input.ends), linkId: input.id == null ? undefined : String(input.id) }),
  }),
  updateLink: t.prismaField({
    type: "Link",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), input: t.arg({ type: UpdateLinkInput, required: true }) },
    resolve: (_q, _r, { projectId, id, input }, ctx) =>
      updateLink(ctx, String(projectId), String(id), { ...toChanges(input), nodes: toEnds(input.endLabels) }),
  }),
  deleteLink: t.field({
    type: "ID",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_r, { projectId, id }, ctx) => {
      await deleteLink(ctx, String(projectId), String(id));
      return String(id);
    },
  }),
}));
