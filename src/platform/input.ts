import { z } from "zod";
import { InvalidInputError } from "./core/errors.js";

/**
 * The one validation style: each operation declares its input once as a zod schema in domain terms and parses
 * what it is given with `parseInput`, so every caller (REST, GraphQL, import, internal) meets the same rules. A
 * REST adapter may validate its wire body first with the same field schemas, only to word errors as its protocol
 * does (GNS3's jsonschema wording, ONTAP's error codes).
 */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue.path.length ? `${issue.path.join(".")}: ` : "";
  throw new InvalidInputError(`${at}${issue.message}`, { target: issue.path.join(".") || undefined });
}

/** A UUID as GNS3 writes its ids (any case); ids also name directories, so nothing else is accepted. */
export const UUID_PATTERN = /^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$/;

/** A UUID field, checked as GNS3's jsonschema does (length first, then the pattern), for the same 400 wording. */
export const uuidSchema = z.string().min(36).max(36).regex(UUID_PATTERN);
