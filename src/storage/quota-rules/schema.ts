import { z } from "zod";
import { CONTROL_CHARACTERS } from "../../platform/core/text.js";
import { CODES } from "../core/codes.js";
import { problemIssue, type Problem } from "../core/input.js";
import { int64, objectRef, text } from "../core/schema.js";

/**
 * The input of the quota rule operations, in domain terms, with the rules of the spec and the reference: which
 * fields each rule type takes, limits in whole KiB, a numeric user name is a UID.
 */
export const RULE_TYPES = ["user", "group", "tree"] as const;
export type RuleType = (typeof RULE_TYPES)[number];

const UNLIMITED = { kind: "invalid", expected: 'a non-negative integer, or -1 / "-" for unlimited' } as const;

/** A limit: omitted = not given, null or -1 = unlimited, else a non-negative integer; space is rounded up to whole KiB. */
const limit = (space: boolean) =>
  int64
    .nullable()
    .optional()
    .transform((n, ctx) => {
      if (n === undefined || n === null || n === -1n) return n === -1n ? null : n;
      if (n < 0n) {
        ctx.issues.push(problemIssue(n, UNLIMITED));
        return z.NEVER;
      }
      return space ? ((n + 1023n) / 1024n) * 1024n : n;
    });

const limits = {
  spaceHardLimit: limit(true),
  spaceSoftLimit: limit(true),
  filesHardLimit: limit(false),
  filesSoftLimit: limit(false),
  userMapping: z.boolean({ error: "a boolean" }).optional(),
};

export const LIMIT_NAMES = Object.keys(limits) as (keyof typeof limits)[];

/** The changeable part of a rule (PATCH / updateQuotaRule). */
export const ruleLimitsSchema = z.strictObject(limits);
export type RuleLimitsInput = z.input<typeof ruleLimitsSchema>;
export type RuleLimits = z.output<typeof ruleLimitsSchema>;

const target = z.strictObject({ name: text.optional(), id: text.optional() });

const base = z.strictObject({
  type: text.pipe(z.enum(RULE_TYPES, { error: `one of ${RULE_TYPES.join(", ")}` })),
  qtreeName: text.optional(),
  group: target.optional(),
  svm: objectRef.optional(),
  volume: objectRef.optional(),
  users: z.array(target, { error: "an array" }).optional(),
  ...limits,
});

const badCombination = (message: string): Problem => ({ kind: "refused", message, code: CODES.badCombination });
const NAME: Problem = { kind: "invalid", expected: "a name without control characters" };

/** The rules that tie fields to the rule type; reports the first broken one (at its path) or returns the rule. */
function applyRules(i: z.output<typeof base>): { path: (string | number)[]; problem: Problem } | CreateRule {
  const named = (value: string | undefined, path: (string | number)[]) => (value !== undefined && CONTROL_CHARACTERS.test(value) ? { path, problem: NAME } : undefined);
  const qtreeNameBad = named(i.qtreeName, ["qtreeName"]);
  if (qtreeNameBad) return qtreeNameBad;
  if (i.type !== "user" && i.users !== undefined) return { path: ["users"], problem: { kind: "onlyFor", ruleType: "user" } };
  if (i.type !== "group" && i.group !== undefined) return { path: ["group"], problem: { kind: "onlyFor", ruleType: "group" } };
  if (i.type !== "user" && i.userMapping !== undefined) return { path: ["userMapping"], problem: { kind: "onlyFor", ruleType: "user" } };
  if (i.type === "tree" && i.qtreeName === undefined) return { path: ["qtreeName"], problem: { kind: "missing" } };

  let group: CreateRule["group"] = null;
  if (i.type === "group") {
    if (!i.group) return { path: ["group"], problem: { kind: "missing" } };
    const { name, id } = i.group;
    if (name !== undefined && id !== undefined) return { path: ["group"], problem: { kind: "exclusive", of: [["group", "name"], ["group", "id"]] } };
    if (name === undefined && id === undefined) return { path: ["group", "name"], problem: { kind: "missing" } };
    const bad = named(name, ["group", "name"]) ?? named(id, ["group", "id"]);
    if (bad) return bad;
    group = name !== undefined ? { name, id: null } : { name: null, id: id! };
  }

  const users: CreateRule["users"] = [];
  if (i.type === "user") {
    if (!i.users?.length) return { path: ["users"], problem: { kind: "missing" } };
    for (const [n, u] of i.users.entries()) {
      if ((u.name === undefined) === (u.id === undefined)) return { path: ["users", n], problem: badCombination("Each user must have either a name or an id, not both.") };
      const value = (u.name ?? u.id)!;
      const bad = named(value, ["users", n, u.name !== undefined ? "name" : "id"]);
      if (bad) return bad;
      if (u.id !== undefined && !/^\d+$/.test(value)) return { path: ["users", n, "id"], problem: { kind: "invalid", expected: "a numeric user id" } };
      // A purely numeric user name is a UID: stored and reported as an id (what Ansible expects).
      users.push(/^\d+$/.test(value) ? { name: null, userId: value } : { name: value, userId: null });
    }
    if (users.length > 1 && users.some((u) => u.name === "")) return { path: ["users"], problem: badCombination("A default user rule (empty user name) cannot list other users.") };
  }

  const { svm, volume, type, qtreeName, spaceHardLimit, spaceSoftLimit, filesHardLimit, filesSoftLimit, userMapping } = i;
  return {
    svm: svm ?? {},
    volume: volume ?? {},
    type,
    // For user and group rules an empty qtree name (what Ansible sends) means "volume level".
    qtreeName: type === "tree" ? qtreeName! : qtreeName ? qtreeName : null,
    users,
    group,
    limits: { spaceHardLimit, spaceSoftLimit, filesHardLimit, filesSoftLimit, ...(userMapping !== undefined ? { userMapping } : {}) },
  };
}

/** A new rule (POST / createQuotaRule). */
export const createRuleSchema = base.transform((i, ctx) => {
  const rule = applyRules(i);
  if ("problem" in rule) {
    ctx.issues.push(problemIssue(i, rule.problem, rule.path));
    return z.NEVER;
  }
  return rule;
});
export type CreateRuleInput = z.input<typeof createRuleSchema>;

export interface CreateRule {
  svm: { name?: string; uuid?: string };
  volume: { name?: string; uuid?: string };
  type: RuleType;
  /** null: volume-level user/group rule. */
  qtreeName: string | null;
  users: { name: string | null; userId: string | null }[];
  group: { name: string | null; id: string | null } | null;
  limits: RuleLimits;
}
