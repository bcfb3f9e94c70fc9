import { z } from "zod";
import { refused, rule } from "../core/input.js";
import { text } from "../core/schema.js";

/** The input of the SVM operations, in domain terms. */
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,46}$/;

export const createSvmSchema = z
  .strictObject({ name: text.default("") })
  .superRefine(rule((s) => (NAME.test(s.name) ? undefined : refused(["name"], `Invalid SVM name "${s.name}".`))));
export type CreateSvmInput = z.input<typeof createSvmSchema>;
