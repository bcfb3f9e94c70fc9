import type { Job, QuotaRule } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { globalId } from "../../platform/graphql/global-id.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { DELETED_IDS } from "../core/graphql.js";
import { fieldNames, inTermsOf } from "../core/input.js";
import { JOB_DESCRIPTION, JobRef, jobWithin, RETURN_TIMEOUT_DESCRIPTION, returnTimeoutOf } from "../jobs/graphql.js";
import { SvmSelector, svmSelection } from "../svms/graphql.js";
import { VolumeSelector, volumeSelection } from "../volumes/graphql.js";
import { GRAPHQL_LIMIT_NAMES, LIMIT_DOCS, QuotaRuleRef, QuotaRuleType, ruleUuidOf } from "./graphql.js";
import { createRule, deleteRule, updateRule } from "./operations.js";
import { LIMIT_NAMES, type CreateRuleInput, type RuleLimitsInput } from "./schema.js";

/** GraphQL face of the quota rule changes: each answers the rule (or the ids it removed) and the job that enforces it. */
const LimitsInputType = builder.inputType("QuotaLimitsInput", {
  description: "Limits; null (or omitted on create) = unlimited. Space in bytes, rounded up to whole KiB.",
  fields: (t) => ({
    spaceHardLimitBytes: t.field({ type: "BigInt", description: LIMIT_DOCS.spaceHardLimitBytes }),
    spaceSoftLimitBytes: t.field({ type: "BigInt", description: LIMIT_DOCS.spaceSoftLimitBytes }),
    filesHardLimit: t.field({ type: "BigInt", description: LIMIT_DOCS.filesHardLimit }),
    filesSoftLimit: t.field({ type: "BigInt", description: LIMIT_DOCS.filesSoftLimit }),
    userMapping: t.boolean({ description: "user rules only" }),
  }),
});
const UserTargetInput = builder.inputType("QuotaUserInput", {
  description: "A user a rule limits: by name or id (an empty name makes the default rule)",
  fields: (t) => ({ name: t.string({ description: "The user's name" }), id: t.string({ description: "The user's UNIX id (or Windows SID)" }) }),
});
const GroupTargetInput = builder.inputType("QuotaGroupInput", {
  description: "The group a rule limits: by name or id (an empty name makes the default rule)",
  fields: (t) => ({ name: t.string({ description: "The group's name" }), id: t.string({ description: "The group's UNIX id" }) }),
});
const CreateQuotaRuleInput = builder.inputType("CreateQuotaRuleInput", {
  description: "A new quota rule: where, whose use, and the limits",
  fields: (t) => ({
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
    svm: t.field({ type: SvmSelector, required: true, description: "The volume's SVM" }),
    volume: t.field({ type: VolumeSelector, required: true, description: "The volume the rule limits" }),
    type: t.field({ type: QuotaRuleType, required: true, description: "Whose use the rule limits" }),
    qtreeName: t.string({ description: "tree rules: the qtree (\"\" = default); user/group rules: the qtree scope (omit = volume level)" }),
    users: t.field({ type: [UserTargetInput], description: "user rules: the users limited" }),
    group: t.field({ type: GroupTargetInput, description: "group rules: the group limited" }),
    limits: t.field({ type: LimitsInputType, description: "The limits (all unlimited when omitted)" }),
  }),
});

type LimitArgs = { spaceHardLimitBytes?: bigint | null; spaceSoftLimitBytes?: bigint | null; filesHardLimit?: bigint | null; filesSoftLimit?: bigint | null; userMapping?: boolean | null };

/** Limits as the operation takes them: null stays null (unlimited), omitted stays omitted (unchanged). */
function limitsInput(l: LimitArgs | null | undefined): RuleLimitsInput {
  if (!l) return {};
  const { userMapping, spaceHardLimitBytes, spaceSoftLimitBytes, ...files } = l;
  return { ...files, spaceHardLimit: spaceHardLimitBytes, spaceSoftLimit: spaceSoftLimitBytes, ...(userMapping != null ? { userMapping } : {}) };
}

const present = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v != null)) as { [K in keyof T]?: NonNullable<T[K]> };

function ruleInput(input: typeof CreateQuotaRuleInput.$inferInput): CreateRuleInput {
  return {
    svm: svmSelection(input.svm),
    volume: volumeSelection(input.volume),
    type: input.type.toLowerCase(),
    ...(input.qtreeName != null ? { qtreeName: input.qtreeName } : {}),
    ...(input.users ? { users: input.users.map(present) } : {}),
    ...(input.group ? { group: present(input.group) } : {}),
    ...limitsInput(input.limits),
  };
}

/** The operation reports domain paths; this face nests the limits under `limits`, space limits named with their unit. */
const GRAPHQL_NAMES = fieldNames(Object.fromEntries(LIMIT_NAMES.map((f) => [f, `limits.${GRAPHQL_LIMIT_NAMES[f] ?? f}`])));

const UpdateQuotaRuleInput = builder.inputType("UpdateQuotaRuleInput", {
  description: "A rule and the limits to change",
  fields: (t) => ({
    id: t.id({ required: true, description: "The rule's id (its global id, or its uuid)" }),
    limits: t.field({ type: LimitsInputType, required: true, description: "The limits to change (omitted ones stay)" }),
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
  }),
});
const DeleteQuotaRuleInput = builder.inputType("DeleteQuotaRuleInput", {
  description: "The rule to delete",
  fields: (t) => ({
    id: t.id({ required: true, description: "The rule's id (its global id, or its uuid)" }),
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
  }),
});

/** The report entries of the rules a delete removes: one rule's, or those scoped to a qtree. */
type ReportWhere = { ruleUuid: string } | { volumeUuid: string; qtreeName: string };

/**
 * Deleting rules drops their report entries once the job's resize ran (quota on): `remove` deletes the rules and
 * answers the job after the wait; the result names the entries it removed, for the payload's deletedIds.
 */
export async function withReportEntries(ctx: AppContext, entries: ReportWhere, remove: () => Promise<Job>): Promise<{ job: Job; reportIds: string[] }> {
  const read = async () => ctx.db.enforcedQuota.findMany({ where: entries, select: { ruleUuid: true } });
  const before = await read();
  const job = await remove();
  const after = new Set((await read()).map((r) => r.ruleUuid));
  return { job, reportIds: before.filter((r) => !after.has(r.ruleUuid)).map((r) => globalId("QuotaReport", r.ruleUuid)) };
}

/** createQuotaRule and updateQuotaRule answer the rule as it is, and the job that resizes enforcement. */
const ruleJobPayload = (name: string, description: string) =>
  payloadType<{ quotaRule: QuotaRule; job: Job }>(name, description, (t) => ({
    quotaRule: t.field({ type: QuotaRuleRef, description: "The rule as it is now (its limits apply at once; enforcement follows the job)", resolve: (p) => p.quotaRule }),
    job: t.field({ type: JobRef, description: JOB_DESCRIPTION, resolve: (p) => p.job }),
  }));

/** The rule after its change, with the job after the wait. */
const ruleWithJob = async (ctx: AppContext, uuid: string, job: Job) => ({ quotaRule: await ctx.db.quotaRule.findUniqueOrThrow({ where: { uuid } }), job });

builder.mutationFields((t) => ({
  createQuotaRule: t.field({
    type: ruleJobPayload("createQuotaRule", "What `createQuotaRule` made: the rule, and the job that enforces it"),
    description: "Creates a rule (and the volume's default rule of its type when missing); its job resizes enforcement. A rule for a target the volume already limits is refused: DUPLICATE_RULE",
    errors: mutationErrors("createQuotaRule", [InvalidInputError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: CreateQuotaRuleInput, required: true, description: "The new rule" }) },
    resolve: async (_r, { input }, ctx) => {
      const timeout = returnTimeoutOf(input.returnTimeoutSeconds);
      const { uuid, job } = await inTermsOf(GRAPHQL_NAMES, () => createRule(ctx, ruleInput(input)));
      return ruleWithJob(ctx, uuid, await jobWithin(job, timeout));
    },
  }),
  updateQuotaRule: t.field({
    type: ruleJobPayload("updateQuotaRule", "What `updateQuotaRule` changed: the rule, and the job that enforces its new limits"),
    description: "Changes limits or user mapping; with quota on, the new limits are enforced (resize)",
    errors: mutationErrors("updateQuotaRule", [InvalidInputError, NotFoundError]),
    args: { input: t.arg({ type: UpdateQuotaRuleInput, required: true, description: "The rule and its limits" }) },
    resolve: async (_r, { input }, ctx) => {
      const timeout = returnTimeoutOf(input.returnTimeoutSeconds);
      const uuid = ruleUuidOf(input.id);
      const job = await inTermsOf(GRAPHQL_NAMES, () => updateRule(ctx, uuid, limitsInput(input.limits)));
      return ruleWithJob(ctx, uuid, await jobWithin(job, timeout));
    },
  }),
  deleteQuotaRule: t.field({
    type: payloadType<{ deletedIds: string[]; job: Job }>("deleteQuotaRule", "What `deleteQuotaRule` removed: the rule (and its report entry once the resize ran), and the job", (t) => ({
      deletedIds: t.idList({ description: DELETED_IDS, resolve: (p) => p.deletedIds }),
      job: t.field({ type: JobRef, description: JOB_DESCRIPTION, resolve: (p) => p.job }),
    })),
    description: "Deletes a rule; the job resizes enforcement",
    errors: mutationErrors("deleteQuotaRule", [InvalidInputError, NotFoundError]),
    args: { input: t.arg({ type: DeleteQuotaRuleInput, required: true, description: "The rule" }) },
    resolve: async (_r, { input }, ctx) => {
      const timeout = returnTimeoutOf(input.returnTimeoutSeconds);
      const uuid = ruleUuidOf(input.id);
      const { job, reportIds } = await withReportEntries(ctx, { ruleUuid: uuid }, async () => jobWithin(await deleteRule(ctx, uuid), timeout));
      return { deletedIds: [globalId("QuotaRule", uuid), ...reportIds], job };
    },
  }),
}));
