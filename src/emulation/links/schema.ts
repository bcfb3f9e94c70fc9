import { z } from "zod";
import { uuidSchema } from "../../platform/input.js";
import { labelSchema } from "../nodes/schema.js";
import { FILTER_NAMES } from "./filters.js";

/**
 * The link's input contract, declared once. The operations parse what they are given with it; the REST adapter
 * builds GNS3's wire schema from these same field schemas. Parameter ranges of the filters are checked by the
 * operation (normalizeFilters), which also drops disabled ones.
 */
export const linkEndFields = {
  nodeId: uuidSchema,
  adapterNumber: z.int(),
  portNumber: z.int(),
  label: labelSchema,
};
export const linkEndSchema = z.strictObject({ ...linkEndFields, label: linkEndFields.label.optional() });

export const linkFields = {
  linkId: uuidSchema,
  filters: z.partialRecord(z.enum(FILTER_NAMES), z.array(z.union([z.int(), z.string()]))),
  linkStyle: z.strictObject({ color: z.string().optional(), width: z.int().optional(), type: z.int().optional() }),
  suspend: z.boolean(),
  /** On update only the labels are taken from these (a link's ends cannot be moved). */
  nodes: z.array(linkEndSchema).max(2),
};

const { linkId, ...settable } = linkFields;
export const linkChangesSchema = z.strictObject(settable).partial();
export const newLinkSchema = linkChangesSchema.extend({ linkId: linkId.optional() });

export type LinkEndpointInput = z.input<typeof linkEndSchema>;
export type LinkChanges = z.input<typeof linkChangesSchema>;
export type NewLink = z.input<typeof newLinkSchema>;
