import { z } from "zod";
import { refused, rule, type Broken } from "../core/input.js";
import { objectRef, text } from "../core/schema.js";

/** The input of the qtree operations, in domain terms. */
export const SECURITY_STYLES = ["unix", "ntfs", "mixed"] as const;
export type SecurityStyle = (typeof SECURITY_STYLES)[number];

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const badName = (name: string | undefined): Broken =>
  name !== undefined && (!NAME.test(name) || name === "." || name === "..") ? refused(["name"], `Invalid qtree name "${name}".`) : undefined;

const settings = {
  securityStyle: text.pipe(z.enum(SECURITY_STYLES, { error: SECURITY_STYLES.join(", ") })).optional(),
  unixPermissions: z
    .int({ error: "an integer" })
    .refine((n) => n >= 0 && n <= 7777, { error: "an octal-looking integer up to 7777" })
    .optional(),
};

export const createQtreeSchema = z
  .strictObject({ svm: objectRef.optional(), volume: objectRef.optional(), name: text.default(""), ...settings })
  .superRefine(rule((q) => badName(q.name)));
export type CreateQtreeInput = z.input<typeof createQtreeSchema>;

/** A rename takes the quota rules scoped to the qtree along. */
export const updateQtreeSchema = z.strictObject({ name: text.optional(), ...settings }).superRefine(rule((q) => badName(q.name)));
export type UpdateQtreeInput = z.input<typeof updateQtreeSchema>;
