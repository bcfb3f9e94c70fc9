import { z } from "zod";

/** GNS3's compute schema (POST body); PUT takes the same fields, none required. */
export const PROTOCOLS = ["http", "https"] as const;

const fields = {
  compute_id: z.string().min(1),
  name: z.string().min(1),
  protocol: z.enum(PROTOCOLS),
  host: z.string().min(1),
  port: z.int().min(1).max(65535),
  user: z.string().nullable(),
  password: z.string().nullable(),
};

export const computeCreateSchema = z.strictObject({
  ...fields,
  compute_id: fields.compute_id.optional(),
  name: fields.name.optional(),
  user: fields.user.optional(),
  password: fields.password.optional(),
});
export const computeUpdateSchema = z.strictObject(fields).partial();

export type ComputeCreate = z.infer<typeof computeCreateSchema>;
export type ComputeUpdate = z.infer<typeof computeUpdateSchema>;
