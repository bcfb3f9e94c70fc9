import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError, NotFoundError, UniqueViolationError } from "../../platform/core/errors.js";
import { CODES } from "../core/codes.js";
import { publishQuotaChange } from "../core/events.js";
import { aboutField, FieldError, parseInput } from "../core/input.js";
import { startJob, type StartedJob } from "../jobs/operations.js";
import { resolveSvm } from "../svms/operations.js";
import { markResizing, resizeIfEnabled } from "../volumes/enforcement.js";
import { resolveVolume } from "../volumes/operations.js";
import { isDefaultRule, ruleIdentity } from "./identity.js";
import { createRuleSchema, ruleLimitsSchema, type CreateRuleInput, type RuleLimits, type RuleLimitsInput } from "./schema.js";

export const RULE_INCLUDE = { users: { orderBy: { position: "asc" } }, volume: { include: { svm: true } } } as const;

export async function getRule(ctx: AppContext, uuid: string) {
  const rule = await ctx.db.quotaRule.findUnique({ where: { uuid }, include: RULE_INCLUDE });
  if (!rule) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "uuid" });
  return rule;
}

const limitData = (i: RuleLimits) => ({
  ...(i.spaceHardLimit !== undefined ? { spaceHardLimit: i.spaceHardLimit } : {}),
  ...(i.spaceSoftLimit !== undefined ? { spaceSoftLimit: i.spaceSoftLimit } : {}),
  ...(i.filesHardLimit !== undefined ? { filesHardLimit: i.filesHardLimit } : {}),
  ...(i.filesSoftLimit !== undefined ? { filesSoftLimit: i.filesSoftLimit } : {}),
  ...(i.userMapping !== undefined ? { userMapping: i.userMapping } : {}),
});

type RuleBase = { svmUuid: string; volumeUuid: string };
type RuleTarget = { type: string; qtreeName: string | null; groupName: string | null; groupId: string | null; userMapping?: boolean | null };
type RuleUser = { name: string | null; userId: string | null };

const duplicateRule = () => new ConflictError("Duplicate entry: the quota rule already exists.", { code: CODES.duplicateRule, target: "uuid", reason: "duplicate_rule" });

async function insertRule(tx: Tx, base: RuleBase, rule: RuleTarget, users: RuleUser[], limits: object = {}) {
  const identity = ruleIdentity(rule, users);
  if (await tx.quotaRule.findUnique({ where: { volumeUuid_identity: { volumeUuid: base.volumeUuid, identity } } })) {
    throw duplicateRule();
  }
  return insertRuleRow(tx, base, rule, users, identity, limits);
}

/** The insert itself: a concurrent insert of the same identity surfaces as a UniqueViolationError. */
function insertRuleRow(tx: Tx, base: RuleBase, rule: RuleTarget, users: RuleUser[], identity: string, limits: object = {}) {
  return tx.quotaRule.create({
    data: {
      uuid: randomUUID(),
      ...base,
      ...rule,
      userMapping: rule.type === "user" ? (rule.userMapping ?? false) : null,
      identity,
      ...limits,
      users: { create: users.map((u, position) => ({ position, ...u })) },
    },
  });
}

/**
 * Creates a rule and, for an explicit or qtree-scoped rule, the volume's default rule of the same type when it
 * has none. Rules change whatever the quota state; the returned job resizes enforcement when quota is on.
 */
export async function createRule(ctx: AppContext, given: CreateRuleInput): Promise<{ uuid: string; job: StartedJob }> {
  const input = parseInput(createRuleSchema, given);
  const svm = await resolveSvm(ctx, input.svm);
  const volume = await resolveVolume(ctx, svm, input.volume);
  const scopedQtree = input.qtreeName || null;
  if (scopedQtree && !(await ctx.db.qtree.findFirst({ where: { volumeUuid: volume.uuid, name: scopedQtree } }))) {
    throw aboutField(new NotFoundError(`Qtree "${scopedQtree}" does not exist in volume "${volume.name}".`, { code: CODES.qtreeNotFound }), ["qtreeName"]);
  }
  const base = { svmUuid: svm.uuid, volumeUuid: volume.uuid };
  const target = { type: input.type, qtreeName: input.qtreeName, groupName: input.group?.name ?? null, groupId: input.group?.id ?? null };
  const created = await retryLostRace(() => ctx.db.$transaction(async (tx) => {
    const rule = await insertRule(tx, base, { ...target, userMapping: input.limits.userMapping }, input.users, limitData(input.limits));
    const made = [rule.uuid];
    const needsDefault = !isDefaultRule(target, input.users) || (input.type !== "tree" && input.qtreeName !== null);
    if (needsDefault) {
      const defaultTarget = { type: input.type, qtreeName: input.type === "tree" ? "" : null, groupName: input.type === "group" ? "" : null, groupId: null };
      const defaultUsers = input.type === "user" ? [{ name: "", userId: null }] : [];
      const identity = ruleIdentity(defaultTarget, defaultUsers);
      // Checked once: a default rule a concurrent create commits after this check is a unique violation, retried.
      if (!(await tx.quotaRule.findUnique({ where: { volumeUuid_identity: { volumeUuid: volume.uuid, identity } } }))) {
        made.push((await insertRuleRow(tx, base, defaultTarget, defaultUsers, identity)).uuid);
      }
    }
    await markResizing(tx, volume.uuid);
    return made;
  }));
  for (const ruleUuid of created) await publishQuotaChange(ctx, { kind: "RULE_CREATED", ...base, ruleUuid });
  const job = await startJob(ctx, { action: "create", resource: "quota rule", key: created[0] }, svm.uuid, () => resizeIfEnabled(ctx, volume.uuid));
  return { uuid: created[0], job };
}

/**
 * A create that loses a race at the unique index is run again: if the row it collided with was the default rule
 * (added only when missing, by concurrent creates of different rules), the next attempt sees it and succeeds; if it
 * was the rule itself, the next attempt's pre-check reports the duplicate it is.
 */
async function retryLostRace<T>(create: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (e) {
      if (!(e instanceof UniqueViolationError)) throw e;
      if (attempt >= 5) throw duplicateRule();
    }
  }
}

/** Limits and user mapping (user rules only) change; with quota on, the job resizes enforcement. */
export async function updateRule(ctx: AppContext, uuid: string, given: RuleLimitsInput): Promise<StartedJob> {
  const patch = parseInput(ruleLimitsSchema, given);
  const rule = await getRule(ctx, uuid);
  if (patch.userMapping !== undefined && rule.type !== "user") throw new FieldError(["userMapping"], { kind: "onlyFor", ruleType: "user" });
  if (patch.userMapping === true && rule.users.length > 1) {
    const message = "User mapping cannot be turned on for a rule with several users.";
    throw new FieldError(["userMapping"], { kind: "refused", message, code: CODES.badCombination });
  }
  const data = limitData(patch);
  await ctx.db.$transaction(async (tx) => {
    await tx.quotaRule.update({ where: { uuid }, data });
    await markResizing(tx, rule.volumeUuid);
  });
  const changed = Object.entries(data).filter(([field, value]) => rule[field as keyof typeof data] !== value).map(([field]) => field);
  await publishQuotaChange(ctx, { kind: "RULE_UPDATED", svmUuid: rule.svmUuid, volumeUuid: rule.volumeUuid, ruleUuid: uuid, changed });
  return startJob(ctx, { action: "update", resource: "quota rule", key: uuid }, rule.svmUuid, () => resizeIfEnabled(ctx, rule.volumeUuid));
}

export async function deleteRule(ctx: AppContext, uuid: string): Promise<StartedJob> {
  const rule = await getRule(ctx, uuid);
  await ctx.db.$transaction(async (tx) => {
    await tx.quotaRule.delete({ where: { uuid } });
    await markResizing(tx, rule.volumeUuid);
  });
  await publishQuotaChange(ctx, { kind: "RULE_DELETED", svmUuid: rule.svmUuid, volumeUuid: rule.volumeUuid, ruleUuid: uuid });
  return startJob(ctx, { action: "delete", resource: "quota rule", key: uuid }, rule.svmUuid, () => resizeIfEnabled(ctx, rule.volumeUuid));
}
