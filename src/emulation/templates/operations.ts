import { randomUUID } from "node:crypto";
import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { LOCAL_ID } from "../computes/model.js";
import { getCompute } from "../computes/operations.js";
import { publishControllerEvent } from "../core/events.js";
import { createNode } from "../nodes/operations.js";
import type { NodeChanges } from "../nodes/schema.js";
import { getOpenedProject } from "../projects/lookup.js";
import { parseInput } from "../../platform/input.js";
import {
  baseTemplateSchema,
  BUILTIN_TEMPLATES,
  NODE_FIELD_KEYS,
  templateDefaults,
  templateNodeProperties,
  templateSchema,
  type TemplateObject,
} from "./builtin.js";

/**
 * GNS3 templates: the built-ins (code) and user templates (one row each, the template object as a JSON
 * document). Every change is announced on the controller stream as template.created/updated/deleted with the
 * full template, which is how the GUI keeps its device list current.
 */

/** Keys a client cannot change on an existing template (GNS3 ignores them in a PUT body). */
const FIXED_KEYS = ["template_id", "template_type", "compute_id", "builtin"] as const;

const fromRow = (row: { bodyJson: string }) => JSON.parse(row.bodyJson) as TemplateObject;
const builtinById = (id: string) => BUILTIN_TEMPLATES.find((t) => t.template_id === id);

/** Built-ins first (in GNS3's order), then user templates in creation order. */
export async function listTemplates(ctx: AppContext): Promise<TemplateObject[]> {
  const rows = await ctx.db.template.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return [...BUILTIN_TEMPLATES, ...rows.map(fromRow)];
}

/** A template by id (built-in or user), or undefined. */
export async function findTemplate(ctx: AppContext, id: string): Promise<TemplateObject | undefined> {
  const builtin = builtinById(id);
  if (builtin) return builtin;
  const row = await ctx.db.template.findUnique({ where: { id } });
  return row ? fromRow(row) : undefined;
}

export async function getTemplate(ctx: AppContext, id: string): Promise<TemplateObject> {
  const template = await findTemplate(ctx, id);
  if (!template) throw new NotFoundError(`Template ID ${id} doesn't exist`);
  return template;
}

async function store(ctx: AppContext, template: TemplateObject, action: "created" | "updated"): Promise<TemplateObject> {
  const data = { name: template.name, templateType: template.template_type, bodyJson: JSON.stringify(template) };
  if (action === "created") await ctx.db.template.create({ data: { id: template.template_id, ...data } });
  else await ctx.db.template.update({ where: { id: template.template_id }, data });
  await publishControllerEvent(ctx, { type: `template.${action}`, template });
  return template;
}

/** A new user template: per-type defaults filled in, a client-chosen template_id kept. */
export async function createTemplate(ctx: AppContext, input: Record<string, unknown>): Promise<TemplateObject> {
  const base = parseInput(baseTemplateSchema, input);
  const valid = parseInput(templateSchema(base.template_type), input) as Partial<TemplateObject>;
  const id = valid.template_id ?? randomUUID();
  if (await findTemplate(ctx, id)) throw new ConflictError(`Template ID '${id}' already exists`, { reason: "already_exists" });
  const template = { ...templateDefaults(base.template_type), ...valid, template_id: id, builtin: false } as TemplateObject;
  return store(ctx, template, "created");
}

async function userTemplate(ctx: AppContext, id: string, verb: string): Promise<TemplateObject> {
  const template = await getTemplate(ctx, id);
  if (template.builtin) throw new ConflictError(`Template ID ${id} cannot be ${verb} because it is a builtin`);
  return template;
}

/** Merges changes (the fixed keys are ignored, as GNS3 does) and checks the result against the type's rules. */
export async function updateTemplate(ctx: AppContext, id: string, changes: Record<string, unknown>): Promise<TemplateObject> {
  const current = await userTemplate(ctx, id, "updated");
  const merged = { ...current, ...changes, ...Object.fromEntries(FIXED_KEYS.map((k) => [k, current[k]])) };
  const valid = parseInput(templateSchema(current.template_type), merged) as TemplateObject;
  return store(ctx, { ...valid, template_id: id, builtin: false }, "updated");
}

export async function deleteTemplate(ctx: AppContext, id: string): Promise<TemplateObject> {
  const template = await userTemplate(ctx, id, "deleted");
  await ctx.db.template.delete({ where: { id } });
  await publishControllerEvent(ctx, { type: "template.deleted", template });
  return template;
}

/** A copy with a new id and the same name. */
export async function duplicateTemplate(ctx: AppContext, id: string): Promise<TemplateObject> {
  const template = await userTemplate(ctx, id, "duplicated");
  return store(ctx, { ...template, template_id: randomUUID() }, "created");
}

/** The node types a compute runs; a disconnected compute runs nothing until it is back. */
async function assertRunnable(ctx: AppContext, computeId: string, nodeType: string): Promise<void> {
  const compute = await getCompute(ctx, computeId);
  const types = compute.capabilities.node_types;
  if (types.includes(nodeType)) return;
  if (computeId !== LOCAL_ID && !compute.connected) throw new ConflictError(`Compute ${compute.name} is not connected`);
  throw new ConflictError(
    `Compute ${compute.name} cannot run ${nodeType} nodes: the node types it runs are ${types.join(", ") || "none"}`,
  );
}

export interface NodeFromTemplate {
  x: number;
  y: number;
  name?: string | null;
  computeId?: string | null;
}

/**
 * GNS3's "add a node from a template": a built-in runs on the compute the client picks; a user template on its
 * own compute (or the client's pick when it has none). The name comes from default_name_format ("PC{0}" → PC1,
 * PC2 …; "{name}" → the template name). The node itself is made by the one node-creation operation.
 */
export async function createNodeFromTemplate(ctx: AppContext, projectId: string, templateId: string, input: NodeFromTemplate): Promise<Node> {
  await getOpenedProject(ctx, projectId);
  const template = await findTemplate(ctx, templateId);
  if (!template) throw new NotFoundError(`Template ${templateId} doesn't exist`);
  const computeId = (template.builtin ? input.computeId : (template.compute_id ?? input.computeId)) ?? null;
  if (computeId === null) throw new NotFoundError("Compute ID None doesn't exist");
  await assertRunnable(ctx, computeId, template.template_type);

  const fields = Object.fromEntries(
    Object.entries(NODE_FIELD_KEYS).flatMap(([key, field]) => (template[key] === undefined ? [] : [[field, template[key]]])),
  ) as NodeChanges;
  return createNode(ctx, projectId, {
    ...fields,
    name: input.name ?? template.default_name_format.replaceAll("{name}", template.name),
    nodeType: template.template_type,
    computeId,
    templateId: template.template_id,
    properties: templateNodeProperties(template),
    x: input.x,
    y: input.y,
  });
}
