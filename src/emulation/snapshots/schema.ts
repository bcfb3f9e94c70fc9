import { z } from "zod";

/**
 * A snapshot's input contract, declared once; the REST adapter builds GNS3's wire schema from these field
 * schemas (upstream gives `name` no type — a number is a 500 there, compat §20.1; here it must be a string). The
 * name also names a file: the operation checks it as one.
 */
export const snapshotFields = { name: z.string().min(1), description: z.string().min(1) };
export const newSnapshotSchema = z.strictObject({ name: snapshotFields.name, description: snapshotFields.description.nullable().optional() });
export type NewSnapshot = z.input<typeof newSnapshotSchema>;
