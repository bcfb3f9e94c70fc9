import "../nodes/graphql.js"; // the EmulatedNode type and the NodeType enum
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import { NodeTypeEnum } from "../nodes/graphql.js";
import { listAppliances } from "./appliances.js";
import { CATEGORIES, type TemplateObject } from "./builtin.js";
import {
  createNodeFromTemplate,
  createTemplate,
  deleteTemplate,
  duplicateTemplate,
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

/** The keys with a field of their own; the rest of the template object is `settings`. */
const COMMON_KEYS = new Set(["template_id", "template_type", "name", "category", "builtin", "compute_id", "symbol", "default_name_format"]);
const settingsOf = (t: TemplateObject) => Object.fromEntries(Object.entries(t).filter(([k]) => !COMMON_KEYS.has(k)));

export const Template = builder.objectRef<TemplateObject>("Template").implement({
  description: "A device kind nodes are made from: a GNS3 built-in (fixed id) or a user template",
  fields: (t) => ({
    id: t.id({ description: "The template's id (a UUID; fixed for built-ins)", resolve: (x) => x.template_id }),
    name: t.string({ description: "The template's name, as a device list shows it", resolve: (x) => x.name }),
    templateType: t.field({ type: NodeTypeEnum, description: "The node type of the nodes made from it", resolve: (x) => x.template_type }),
    category: t.field({ type: TemplateCategoryEnum, description: "The shelf it sits on in a device list", resolve: (x) => x.category }),
    builtin: t.boolean({ description: "Whether it is a GNS3 built-in (which cannot be changed or deleted)", resolve: (x) => x.builtin }),
    computeId: t.string({ nullable: true, description: "Where its nodes run; null: the client picks (all built-ins)", resolve: (x) => x.compute_id }),
    symbol: t.string({ description: "The icon its nodes are drawn with (e.g. :/symbols/router.svg)", resolve: (x) => x.symbol }),
    defaultNameFormat: t.string({ description: "Node names: {0} → the first free number, {name} → the template name", resolve: (x) => x.default_name_format }),
    settings: t.field({ type: "JSON", description: "The node type's settings, named as in GNS3 (console_type, ports_mapping, …)", resolve: settingsOf }),
  }),
});

const templateFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  category: t.field({ type: TemplateCategoryEnum, description: "The shelf it sits on in a device list" }),
  symbol: t.string({ description: "The icon its nodes are drawn with (e.g. :/symbols/router.svg)" }),
  defaultNameFormat: t.string({ description: "Node names: {0} → the first free number, {name} → the template name" }),
  settings: t.field({ type: "JSON", description: "The node type's settings, named as in GNS3; unknown ones are refused" }),
});

const CreateTemplateInput = builder.inputType("CreateTemplateInput", {
  description: "A new user template: a device kind with the settings its nodes start with",
  fields: (t) => ({
    id: t.id({ description: "Chosen template id (UUID)" }),
    name: t.string({ required: true, description: "The template's name" }),
    templateType: t.field({ type: NodeTypeEnum, required: true, description: "The node type of the nodes made from it" }),
    computeId: t.id({ description: "null: the client picks a compute for each node" }),
    ...templateFields(t),
  }),
});
const UpdateTemplateInput = builder.inputType("UpdateTemplateInput", {
  description: "Changes to a user template: only the fields given change (nodes already made keep their settings)",
  fields: (t) => ({ name: t.string({ description: "A new name" }), ...templateFields(t) }),
});

/** GraphQL input → the GNS3 template keys the operations take (absent and null fields are left out). */
function toGns3(input: { name?: string | null; category?: string | null; symbol?: string | null; defaultNameFormat?: string | null; settings?: unknown }) {
  const settings = input.settings && typeof input.settings === "object" ? (input.settings as Record<string, unknown>) : {};
  const common = { name: input.name, category: input.category, symbol: input.symbol, default_name_format: input.defaultNameFormat };
  return { ...settings, ...Object.fromEntries(Object.entries(common).filter(([, v]) => v != null)) };
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
    description: "One template",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true, description: "The template's id" }) },
    resolve: (_r, { id }, ctx) => getTemplate(ctx, String(id)),
  }),
  appliances: t.field({ type: ["JSON"], description: "The appliance catalogue: GNS3 appliance files, each describing a ready-made device (its images, settings and where to get them)", resolve: () => listAppliances() }),
}));

builder.mutationFields((t) => ({
  createTemplate: t.field({
    type: Template,
    description: "Adds a user template that nodes can be made from",
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: CreateTemplateInput, required: true, description: "The new template" }) },
    resolve: (_r, { input }, ctx) =>
      createTemplate(ctx, {
        ...toGns3(input),
        template_type: input.templateType,
        compute_id: input.computeId ?? null,
        ...(input.id != null && { template_id: String(input.id) }),
      }),
  }),
  updateTemplate: t.field({
    type: Template,
    description: "Changes a user template; the changed template",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true, description: "The template's id" }), input: t.arg({ type: UpdateTemplateInput, required: true, description: "The changes" }) },
    resolve: (_r, { id, input }, ctx) => updateTemplate(ctx, String(id), toGns3(input)),
  }),
  deleteTemplate: t.field({
    type: "ID",
    description: "Deletes a user template (nodes made from it stay); returns its id",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true, description: "The template's id" }) },
    resolve: async (_r, { id }, ctx) => (await deleteTemplate(ctx, String(id))).template_id,
  }),
  duplicateTemplate: t.field({
    type: Template,
    description: "A copy of a user template with a new id and the same name",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true, description: "The id of the template to copy" }) },
    resolve: (_r, { id }, ctx) => duplicateTemplate(ctx, String(id)),
  }),
  createNodeFromTemplate: t.prismaField({
    type: "Node",
    description: "A node with the template's settings, named by its defaultNameFormat (PC{0} → PC1, PC2 …)",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.id({ required: true, description: "The project's id (an opened project)" }),
      templateId: t.arg.id({ required: true, description: "The template's id" }),
      x: t.arg.int({ required: true, description: "Horizontal position on the canvas, in pixels" }),
      y: t.arg.int({ required: true, description: "Vertical position on the canvas, in pixels" }),
      name: t.arg.string({ description: "The node's name (default: from the template's defaultNameFormat)" }),
      computeId: t.arg.id({ description: "Required for built-ins; a user template's own compute wins" }),
    },
    resolve: (_q, _r, { projectId, templateId, x, y, name, computeId }, ctx) =>
      createNodeFromTemplate(ctx, String(projectId), String(templateId), { x, y, name, computeId }),
  }),
}));
