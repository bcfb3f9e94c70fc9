import { z } from "zod";

/** Field schemas every storage operation's input uses (see input.ts for how their errors are worded). */
export const text = z.string({ error: "a string" });

/** A 64-bit integer (what both databases store). */
export const int64 = z.bigint({ error: "an integer" }).refine((n) => n >= -(2n ** 63n) && n < 2n ** 63n, { error: "an integer" });

/** An SVM or volume by name and/or uuid (the operation resolves it and reports what is missing). */
export const objectRef = z.strictObject({ name: text.optional(), uuid: text.optional() }, { error: "an object" });
export type ObjectRef = z.output<typeof objectRef>;
