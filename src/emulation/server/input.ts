import type { z } from "zod";
import { InvalidInputError } from "../../platform/errors.js";

/**
 * Operations validate their own input so GraphQL callers get the same rules as REST; the REST adapter validates
 * with the same schema first only to word the error like GNS3's jsonschema.
 */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue.path.length ? `${issue.path.join(".")}: ` : "";
  throw new InvalidInputError(`${at}${issue.message}`, { target: issue.path.join(".") || undefined });
}
