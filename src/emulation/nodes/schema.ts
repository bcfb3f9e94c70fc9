import { z } from "zod";
import { uuidSchema } from "../../platform/input.js";
import { CONSOLE_TYPES, NODE_TYPES } from "../node-model/vocabularies.js";

/**
 * Where a name is drawn (a node's name, a link end's text). Keys beyond these are kept: a label read back from
 * an imported topology is passed on as it was stored.
 */
export const labelFields = {
  text: z.string().optional(),
  style: z.string().nullable().optional(),
  x: z.int().nullable().optional(),
  y: z.int().optional(),
  rotation: z.int().min(-359).max(360).optional(),
};
export const labelSchema = z.looseObject(labelFields);
export type NodeLabel = z.infer<typeof labelSchema>;

/**
 * The node's input contract, declared once: every settable field with its rule. The operations parse what they
 * are given with it (GraphQL, compute API, templates, duplicate); the REST adapter builds GNS3's wire schema
 * from these same field schemas, so a rule and its jsonschema wording cannot drift apart.
 */
export const nodeFields = {
  nodeId: uuidSchema,
  nodeType: z.enum(NODE_TYPES),
  computeId: z.string(),
  name: z.string().min(1),
  templateId: uuidSchema.nullable(),
  console: z.int().min(1).max(65535).nullable(),
  consoleType: z.enum(CONSOLE_TYPES).nullable(),
  consoleAutoStart: z.boolean(),
  properties: z.record(z.string(), z.unknown()),
  label: labelSchema,
  symbol: z.string().min(1).nullable(),
  x: z.int(),
  y: z.int(),
  z: z.int(),
  locked: z.boolean(),
  portNameFormat: z.string(),
  portSegmentSize: z.int().min(0),
  firstPortName: z.string().nullable(),
  customAdapters: z.array(z.record(z.string(), z.unknown())),
};

const { nodeId, nodeType, computeId, name, ...settable } = nodeFields;

/** Settable fields of a node; omitted ones keep their current (or default) value. */
export const nodeChangesSchema = z.strictObject({ name, ...settable }).partial();
export const newNodeSchema = nodeChangesSchema.extend({ name, nodeType, computeId, nodeId: nodeId.optional() });

export type NodeChanges = z.input<typeof nodeChangesSchema>;
export type NewNode = z.input<typeof newNodeSchema>;
