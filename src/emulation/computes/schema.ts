import { z } from "zod";

export const PROTOCOLS = ["http", "https"] as const;

/**
 * A compute registration's input contract (GNS3's compute object), declared once. The operations parse what they
 * are given with it; the REST adapter builds GNS3's wire schemas from these field schemas.
 */
export const computeFields = {
  computeId: z.string().min(1),
  name: z.string().min(1),
  protocol: z.enum(PROTOCOLS),
  host: z.string().min(1),
  port: z.int().min(1).max(65535),
  user: z.string().nullable(),
  password: z.string().nullable(),
};

const { computeId, ...settable } = computeFields;
/** Name, user and password are optional on creation (the name defaults to protocol://user@host:port). */
export const newComputeSchema = z.strictObject({
  ...settable,
  computeId: computeId.optional(),
  name: settable.name.optional(),
  user: settable.user.optional(),
  password: settable.password.optional(),
});
/** Only the fields given change; password null removes it. */
export const computeChangesSchema = z.strictObject(settable).partial();

export type NewCompute = z.input<typeof newComputeSchema>;
export type ComputeChanges = z.input<typeof computeChangesSchema>;
