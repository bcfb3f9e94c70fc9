import { z } from "zod";
import { refused, rule } from "../core/input.js";
import { int64, objectRef, text } from "../core/schema.js";

/** The input of the volume operations, in domain terms. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,202}$/;
const MIN_SIZE = 20n * 1024n * 1024n;
const tooSmall = (size: bigint | undefined) => (size !== undefined && size < MIN_SIZE ? refused(["size"], "Volume size must be at least 20MB.") : undefined);

export const createVolumeSchema = z
  .strictObject({ svm: objectRef.optional(), name: text.default(""), size: int64.optional() })
  .superRefine(rule((v) => (NAME.test(v.name) ? tooSmall(v.size) : refused(["name"], `Invalid volume name "${v.name}".`))));
export type CreateVolumeInput = z.input<typeof createVolumeSchema>;

/** Size and quota on/off; turning quota on or off runs as the returned job. */
export const updateVolumeSchema = z
  .strictObject({ size: int64.optional(), quotaEnabled: z.boolean({ error: "a boolean" }).optional() })
  .superRefine(rule((v) => tooSmall(v.size)));
export type UpdateVolumeInput = z.input<typeof updateVolumeSchema>;
