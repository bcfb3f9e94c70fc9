import type { Node } from "../../generated/prisma-sqlite/client.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { deletedPayload, idInput, mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { computeIdArg, ComputeRef, findCompute } from "../computes/graphql.js";
import { ConsoleTypeEnum, CustomAdapterRef, gns3Adapters, NODE_CREATE_ERRORS, NodeRef, NodeTypeEnum, templatableNodeFields } from "../nodes/graphql.js";
import { hasTypedSettings, NodeSettings, propertiesFromInput, typedSettings, UNTYPED_NODE_TYPES } from "../nodes/node-settings-graphql.js";
import { gns3Names } from "../nodes/settings-kind.js";
import { projectIdArg } from "../projects/graphql.js";
import { listAppliances } from "./appliances.js";
import { CATEGORIES, templateNodeProperties, type TemplateObject } from "./builtin.js";
import {
  createNodeFromTemplate,
  createTemplate,
  deleteTemplate,
  duplicateTemplate,
  findTemplate,
  getTemplate,
  listTemplates,
  updateTemplate,
} from "./operations.js";

const CATEGORY_DOCS: Record<(typeof CATEGORIES)[number], string> = {
  router: "Routers: forward packets between networks",
  switch: "Switches and hubs: join devices into one network",
  guest: "End hosts: PCs, servers, containers",
  firewall: "Firewalls: filter traffic between networks",
};
const TemplateCategoryEnum = builder.enumType("TemplateCategory", {
  description: "The shelf a template sits on in a lab editor's device list",
  values: Object.fromEntries(CATEGORIES.map((c) => [c.toUpperCase(), { value: c, description: CATEGORY_DOCS[c] }])) as Record<
    string,
    { value: (typeof CATEGORIES)[number]; description: string }
  >,
});

/** The keys with a field of their own; the rest of an untyped template object is `untypedSettings`. */
const COMMON_KEYS = new Set(["template_id", "template_type", "name", "category", "builtin", "compute_id", "symbol", "default_name_format"]);
const untypedSettings = (t: TemplateObject) =>
  hasTypedSettings(t.template_type) ? null : Object.fromEntries(Object.entries(t).filter(([k]) => !COMMON_KEYS.has(k)));
/** The defaults a template gives its nodes, shown as a node's typed settings (its usage note included). */
const templateSettings = (t: TemplateObject) => typedSettings(t.template_type, { usage: t.usage, ...templateNodeProperties(t) }, null);

const stored = <T>(v: unknown, is: (v: unknown) => boolean): T | null => (is(v) ? (v as T) : null);

export const Template = builder.node(builder.objectRef<TemplateObject>("Template"), {
  description: "A device kind nodes are made from: a GNS3 built-in (fixed id) or a user template",
  id: { description: "The template's global id: use it for `node(id:)`, as a cache key and in arguments", resolve: (x) => x.template_id },
  loadOne: async (id, ctx) => (await findTemplate(ctx, id)) ?? null,
  fields: (t) => ({
    templateId: t.id({ description: "The template's GNS3 id (a UUID, fixed for built-ins): the `template_id` of the REST API and the GNS3 GUI", resolve: (x) => x.template_id }),
    name: t.string({ description: "The template's name, as a device list shows it", resolve: (x) => x.name }),
    templateType: t.field({ type: NodeTypeEnum, description: "The node type of the nodes made from it", resolve: (x) => x.template_type }),
    category: t.field({ type: TemplateCategoryEnum, description: "The shelf it sits on in a device list", resolve: (x) => x.category }),
    builtin: t.boolean({ description: "Whether it is a GNS3 built-in (which cannot be changed or deleted)", resolve: (x) => x.builtin }),
    compute: t.field({
      type: ComputeRef,
      nullable: true,
      description: "The compute its nodes run on; null: the client picks one for each node (all built-ins), or the compute is gone",
      resolve: (x, _a, ctx) => (x.compute_id == null ? null : findCompute(ctx, x.compute_id)),
    }),
    symbol: t.string({ description: "The icon its nodes are drawn with (e.g. :/symbols/router.svg)", resolve: (x) => x.symbol }),
    defaultNameFormat: t.string({ description: "Node names: {0} → the first free number, {name} → the template name", resolve: (x) => x.default_name_format }),
    settings: t.field({
      type: NodeSettings,
      nullable: true,
      description: "The emulator settings its nodes start with, typed as a node's (null for the types without typed settings: see `untypedSettings`)",
      resolve: templateSettings,
    }),
    untypedSettings: t.field({
      type: "JSON",
      nullable: true,
      description: `The settings of a template whose node type has no typed settings (${UNTYPED_NODE_TYPES}), named as in GNS3; null for the other types`,
      resolve: untypedSettings,
    }),
    consoleType: t.field({ type: ConsoleTypeEnum, nullable: true, description: "The console protocol its nodes start with (null: the node type's default)", resolve: (x) => stored(x.console_type, (v) => typeof v === "string") }),
    consoleAutoStart: t.boolean({ nullable: true, description: "Whether a client should open its nodes' consoles when they start (null: no)", resolve: (x) => stored(x.console_auto_start, (v) => typeof v === "boolean") }),
    portNameFormat: t.string({ nullable: true, description: "How its nodes' port names are formed (null: the node type's default)", resolve: (x) => stored(x.port_name_format, (v) => typeof v === "string") }),
    portSegmentSize: t.int({ nullable: true, description: "Ports per segment for the {segment…} placeholders of its nodes (null: 0)", resolve: (x) => stored(x.port_segment_size, Number.isInteger) }),
    firstPortName: t.string({ nullable: true, description: "A name for its nodes' first port that overrides the format (null or empty: none)", resolve: (x) => stored(x.first_port_name, (v) => typeof v === "string") }),
    customAdapters: t.field({
      type: [CustomAdapterRef],
      nullable: true,
      description: "Per-adapter overrides its nodes start with (null: the node type takes none)",
      resolve: (x) => stored<Record<string, unknown>[]>(x.custom_adapters, Array.isArray),
    }),
  }),
});

const templateFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  category: t.field({ type: TemplateCategoryEnum, description: "The shelf it sits on in a device list" }),
  symbol: t.string({ description: "The icon its nodes are drawn with (e.g. :/symbols/router.svg)" }),
  defaultNameFormat: t.string({ description: "Node names: {0} → the first free number, {name} → the template name" }),
  // What its nodes start with, named as on a node's input.
  ...templatableNodeFields(t),
  untypedSettings: t.field({
    type: "JSON",
    description: `Settings named as in GNS3, only for node types without typed settings (${UNTYPED_NODE_TYPES}); unknown ones are refused`,
  }),
});

const CreateTemplateInput = builder.inputType("CreateTemplateInput", {
  description: "A new user template: a device kind with the settings its nodes start with",
  fields: (t) => ({
    id: t.id({ description: "Chosen GNS3 template id (a UUID); a taken one is refused (ALREADY_EXISTS)" }),
    name: t.string({ required: true, description: "The template's name" }),
    templateType: t.field({ type: NodeTypeEnum, required: true, description: "The node type of the nodes made from it" }),
    computeId: t.id({ description: "The compute its nodes run on (its global id, or its GNS3 compute_id); null: the client picks one for each node" }),
    ...templateFields(t),
  }),
});
const UpdateTemplateInput = builder.inputType("UpdateTemplateInput", {
  description: "A user template and changes to it: only the fields given change (nodes already made keep their settings)",
  fields: (t) => ({ id: t.id({ required: true, description: "The template (its global id, or its GNS3 template_id)" }), name: t.string({ description: "A new name" }), ...templateFields(t) }),
});
const templateInput = (name: string) => idInput(name, `The template \`${name}\` acts on`, "The template's id (its global id, or its GNS3 template_id)");
const CreateNodeFromTemplateInput = builder.inputType("CreateNodeFromTemplateInput", {
  description: "The template, the project the node goes to and where it is drawn",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id; an opened project)" }),
    templateId: t.id({ required: true, description: "The template (its global id, or its GNS3 template_id)" }),
    x: t.int({ required: true, description: "Horizontal position on the canvas, in pixels" }),
    y: t.int({ required: true, description: "Vertical position on the canvas, in pixels" }),
    name: t.string({ description: "The node's name (default: from the template's defaultNameFormat)" }),
    computeId: t.id({ description: "The compute that runs the node (its global id, or its GNS3 compute_id): required for built-ins; a user template's own compute wins" }),
  }),
});

/** The template an argument names: its global id or its GNS3 template_id. */
const templateIdArg = (value: string | number, target = "id") => domainId(value, "Template", target);

const TemplatePayload = (name: string, what = "the template") =>
  payloadType<{ template: TemplateObject }>(name, `What \`${name}\` changed: ${what}`, (t) => ({
    template: t.field({ type: Template, description: "The template as it is now", resolve: (p) => p.template }),
  }));

/** What changing a template can fail with: bad input or settings, a missing template, a taken id, a built-in (which cannot change). */
const TEMPLATE_ERRORS = [InvalidInputError, NotFoundError, ConflictError];

type TemplateInput = typeof CreateTemplateInput.$inferInput | typeof UpdateTemplateInput.$inferInput;

/**
 * GraphQL input of a template of `type` → the GNS3 template keys the operations take and check (absent and null
 * fields are left out): typed settings become the type's keys, as a node's become its properties.
 */
function toGns3(type: string, input: TemplateInput): Record<string, unknown> {
  const { settings, untypedSettings, customAdapters, name, category, symbol, defaultNameFormat } = input;
  const typed = propertiesFromInput(type, settings, untypedSettings, "untypedSettings") ?? {};
  if (typeof typed !== "object" || Array.isArray(typed)) throw new InvalidInputError("untypedSettings must be an object", { target: "untypedSettings" });
  const { consoleType, consoleAutoStart, portNameFormat, portSegmentSize, firstPortName } = input;
  const given = {
    ...gns3Names({ name, category, symbol, defaultNameFormat, consoleType, consoleAutoStart, portNameFormat, portSegmentSize, firstPortName }),
    ...(customAdapters != null && { custom_adapters: gns3Adapters(customAdapters) }),
  };
  return { ...typed, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v != null)) };
}

const TemplateFilter = builder.inputType("TemplateFilter", {
  description: "Templates matching every field given",
  fields: (t) => ({
    templateType: t.field({ type: [NodeTypeEnum], description: "Templates of one of these node types" }),
    category: t.field({ type: TemplateCategoryEnum, description: "Templates of this category" }),
    builtin: t.boolean({ description: "Only built-ins (true) or only user templates (false)" }),
  }),
});

builder.queryFields((t) => ({
  templates: t.connection(
    {
      type: Template,
      description: "Built-in templates first, then user templates",
      args: { filter: t.arg({ type: TemplateFilter, description: "Only the templates that match" }) },
      resolve: async (_r, args, ctx) => {
        const f = args.filter;
        const list = (await listTemplates(ctx)).filter(
          (x) => (!f?.templateType?.length || f.templateType.includes(x.template_type)) && (f?.category == null || x.category === f.category) && (f?.builtin == null || x.builtin === f.builtin),
        );
        return arrayPage(args, list);
      },
    },
    arrayConnectionOptions,
  ),
  template: t.field({
    type: Template,
    nullable: true,
    description: lookupDescription("One template"),
    args: { id: t.arg.id({ required: true, description: "The template's id (its global id, or its GNS3 template_id)" }) },
    resolve: (_r, { id }, ctx) => orNull(() => getTemplate(ctx, templateIdArg(id))),
  }),
  appliances: t.field({ type: ["JSON"], description: "The appliance catalogue: GNS3 appliance files, each describing a ready-made device (its images, settings and where to get them)", resolve: () => listAppliances() }),
}));

builder.mutationFields((t) => ({
  createTemplate: t.field({
    type: TemplatePayload("createTemplate", "the new template"),
    description: "Adds a user template that nodes can be made from",
    errors: mutationErrors("createTemplate", TEMPLATE_ERRORS),
    args: { input: t.arg({ type: CreateTemplateInput, required: true, description: "The new template" }) },
    resolve: async (_r, { input }, ctx) => ({
      template: await createTemplate(ctx, {
        ...toGns3(input.templateType, input),
        template_type: input.templateType,
        compute_id: input.computeId == null ? null : computeIdArg(input.computeId),
        ...(input.id != null && { template_id: templateIdArg(input.id) }),
      }),
    }),
  }),
  updateTemplate: t.field({
    type: TemplatePayload("updateTemplate"),
    description: "Changes a user template (a built-in is a ConflictError)",
    errors: mutationErrors("updateTemplate", TEMPLATE_ERRORS),
    args: { input: t.arg({ type: UpdateTemplateInput, required: true, description: "The template and the changes" }) },
    resolve: async (_r, { input }, ctx) => {
      const id = templateIdArg(input.id);
      return { template: await updateTemplate(ctx, id, toGns3((await getTemplate(ctx, id)).template_type, input)) };
    },
  }),
  deleteTemplate: t.field({
    type: deletedPayload("deleteTemplate", "the template (nodes made from it stay)"),
    description: "Deletes a user template (a built-in is a ConflictError); nodes made from it stay",
    errors: mutationErrors("deleteTemplate", TEMPLATE_ERRORS),
    args: { input: t.arg({ type: templateInput("deleteTemplate"), required: true, description: "The template" }) },
    resolve: async (_r, { input }, ctx) => ({ deletedIds: [globalId("Template", (await deleteTemplate(ctx, templateIdArg(input.id))).template_id)] }),
  }),
  duplicateTemplate: t.field({
    type: TemplatePayload("duplicateTemplate", "the copy"),
    description: "A copy of a user template with a new id and the same name; the payload's template is the copy",
    errors: mutationErrors("duplicateTemplate", TEMPLATE_ERRORS),
    args: { input: t.arg({ type: templateInput("duplicateTemplate"), required: true, description: "The template to copy" }) },
    resolve: async (_r, { input }, ctx) => ({ template: await duplicateTemplate(ctx, templateIdArg(input.id)) }),
  }),
  createNodeFromTemplate: t.field({
    type: payloadType<{ node: Node }>("createNodeFromTemplate", "What `createNodeFromTemplate` made: the node", (f) => ({
      node: f.field({ type: NodeRef, description: "The new node (stopped; start it with startNode)", resolve: (p) => p.node }),
    })),
    description: "A node with the template's settings, named by its defaultNameFormat (PC{0} → PC1, PC2 …)",
    // Creating the node may reach the compute that runs it.
    errors: mutationErrors("createNodeFromTemplate", NODE_CREATE_ERRORS),
    args: { input: t.arg({ type: CreateNodeFromTemplateInput, required: true, description: "The template, the project and the node's place" }) },
    resolve: async (_r, { input }, ctx) => ({
      node: await createNodeFromTemplate(ctx, projectIdArg(input.projectId), templateIdArg(input.templateId, "templateId"), {
        x: input.x,
        y: input.y,
        name: input.name,
        computeId: input.computeId == null ? input.computeId : computeIdArg(input.computeId),
      }),
    }),
  }),
}));
