import { z } from "zod";
import { INT64_RANGE, isInt64 } from "../../platform/int64.js";

/** Field schemas every storage operation's input uses (see input.ts for how their errors are worded). */
export const text = z.string({ error: "a string" });

/** A 64-bit integer (what both databases store). */
export const int64 = z.bigint({ error: "an integer" }).refine(isInt64, { error: INT64_RANGE });

/** An SVM or volume by name and/or uuid (the operation resolves it and reports what is missing). */
export const objectRef = z.strictObject({ name: text.optional(), uuid: text.optional() }, { error: "an object" });
export type ObjectRef = z.output<typeof objectRef>;
