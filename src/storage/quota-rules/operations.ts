import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/errors.js";
import { CODES } from "../ontap/codes.js";
import { publishQuotaChange } from "../events.js";
import { startJob, type StartedJob } from "../jobs/operations.js";
import { resolveSvm } from "../svms/operations.js";
import { resizeIfEnabled, resolveVolume } from "../volumes/operations.js";
import { isDefaultRule, ruleIdentity } from "./identity.js";
import type { CreateRuleInput, LimitsInput } from "./input.js";

export const RULE_INCLUDE = { users: { orderBy: { position: "asc" } }, volume: { include: { svm: true } } } as const;

export async function getRule(ctx: AppContext, uuid: string) {
  const rule = await ctx.db.quotaRule.findUnique({ where: { uuid }, include: RULE_INCLUDE });
  if (!rule) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "uuid" });
  return rule;
}

const limitData = (i: LimitsInput) => ({
  ...(i.spaceHardLimit !== undefined ? { spaceHardLimit: i.spaceHardLimit } : {}),
  ...(i.spaceSoftLimit !== undefined ? { spaceSoftLimit: i.spaceSoftLimit } : {}),
  ...(i.filesHardLimit !== undefined ? { filesHardLimit: i.filesHardLimit } : {}),
  ...(i.filesSoftLimit !== undefined ? { filesSoftLimit: i.filesSoftLimit } : {}),
  ...(i.userMapping !== undefined ? { userMapping: i.userMapping } : {}),
});

async function insertRule(
  tx: Tx,
  base: { svmUuid: string; volumeUuid: string },
  rule: { type: string; qtreeName: string | null; groupName: string | null; groupId: string | null; userMapping?: boolean | null },
  users: { name: string | null; userId: string | null }[],
  limits: object = {},
) {
  const identity = ruleIdentity(rule, users);
  if (await tx.quotaRule.findUnique({ where: { volumeUuid_identity: { volumeUuid: base.volumeUuid, identity } } })) {
    throw new ConflictError("Duplicate entry: the quota rule already exists.", { code: CODES.duplicateRule, target: "uuid" });
  }
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
export async function createRule(ctx: AppContext, input: CreateRuleInput): Promise<{ uuid: string; job: StartedJob }> {
  const svm = await resolveSvm(ctx, input.svm);
  const volume = await resolveVolume(ctx, svm, input.volume);
  const scopedQtree = input.qtreeName || null;
  if (scopedQtree && !(await ctx.db.qtree.findFirst({ where: { volumeUuid: volume.uuid, name: scopedQtree } }))) {
    throw new NotFoundError(`Qtree "${scopedQtree}" does not exist in volume "${volume.name}".`, { code: CODES.qtreeNotFound, target: "qtree.name" });
  }
  const base = { svmUuid: svm.uuid, volumeUuid: volume.uuid };
  const target = { type: input.type, qtreeName: input.qtreeName, groupName: input.group?.name ?? null, groupId: input.group?.id ?? null };
  const created = await ctx.db.$transaction(async (tx) => {
    const rule = await insertRule(tx, base, { ...target, userMapping: input.userMapping }, input.users, limitData(input));
    const made = [rule.uuid];
    const needsDefault = !isDefaultRule(target, input.users) || (input.type !== "tree" && input.qtreeName !== null);
    if (needsDefault) {
      const defaultTarget = { type: input.type, qtreeName: input.type === "tree" ? "" : null, groupName: input.type === "group" ? "" : null, groupId: null };
      const defaultUsers = input.type === "user" ? [{ name: "", userId: null }] : [];
      const identity = ruleIdentity(defaultTarget, defaultUsers);
      if (!(await tx.quotaRule.findUnique({ where: { volumeUuid_identity: { volumeUuid: volume.uuid, identity } } }))) {
        made.push((await insertRule(tx, base, defaultTarget, defaultUsers)).uuid);
      }
    }
    return made;
  }).catch(uniqueViolationAsDuplicate);
  for (const ruleUuid of created) await publishQuotaChange(ctx, { kind: "RULE_CREATED", ...base, ruleUuid });
  const job = await startJob(ctx, "POST /api/storage/quota/rules", svm.uuid, () => resizeIfEnabled(ctx, volume.uuid));
  return { uuid: created[0], job };
}

/** A concurrent create of the same rule loses at the unique index: report it as the duplicate it is. */
function uniqueViolationAsDuplicate(e: unknown): never {
  if ((e as { code?: string })?.code === "P2002") {
    throw new ConflictError("Duplicate entry: the quota rule already exists.", { code: CODES.duplicateRule, target: "uuid" });
  }
  throw e;
}

/** PATCH: space, files and user_mapping (user rules only). With quota on, the job resizes enforcement. */
export async function updateRule(ctx: AppContext, uuid: string, patch: LimitsInput): Promise<StartedJob> {
  const rule = await getRule(ctx, uuid);
  if (patch.userMapping !== undefined && rule.type !== "user") {
    throw new InvalidInputError(`"user_mapping" is only valid for user rules.`, { code: CODES.badCombination, target: "user_mapping" });
  }
  if (patch.userMapping === true && rule.users.length > 1) {
    throw new InvalidInputError("User mapping cannot be turned on for a rule with several users.", { code: CODES.badCombination, target: "user_mapping" });
  }
  await ctx.db.quotaRule.update({ where: { uuid }, data: limitData(patch) });
  await publishQuotaChange(ctx, { kind: "RULE_UPDATED", svmUuid: rule.svmUuid, volumeUuid: rule.volumeUuid, ruleUuid: uuid });
  return startJob(ctx, `PATCH /api/storage/quota/rules/${uuid}`, rule.svmUuid, () => resizeIfEnabled(ctx, rule.volumeUuid));
}

export async function deleteRule(ctx: AppContext, uuid: string): Promise<StartedJob> {
  const rule = await getRule(ctx, uuid);
  await ctx.db.quotaRule.delete({ where: { uuid } });
  await publishQuotaChange(ctx, { kind: "RULE_DELETED", svmUuid: rule.svmUuid, volumeUuid: rule.volumeUuid, ruleUuid: uuid });
  return startJob(ctx, `DELETE /api/storage/quota/rules/${uuid}`, rule.svmUuid, () => resizeIfEnabled(ctx, rule.volumeUuid));
}
