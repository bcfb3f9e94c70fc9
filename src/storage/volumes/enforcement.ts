import type { AppContext } from "../../platform/context.js";
import { isPostgresUrl, type Tx } from "../../platform/db/client.js";
import { ConflictError } from "../../platform/core/errors.js";
import { CODES } from "../core/codes.js";
import { publishQuotaChange } from "../core/events.js";
import { getVolume } from "./operations.js";

/**
 * Enforcement: the limits enforced in the file system are a copy of the rules (EnforcedQuota), taken when quota is
 * turned on or resized; quota reports read the copy, so rule changes made while quota is off are not enforced.
 *
 * Invariants, kept across crashes and concurrent requests:
 * - A rule change on a volume with quota on marks the volume `resizing` in the rule's own transaction
 *   (markResizing), so a committed change whose resize never ran is visible in the database.
 * - The copy is rewritten and the state set back to `on` in one transaction that first takes the volume row
 *   (enforce), so concurrent resizes of one volume run one after the other and never collide on the copy's keys.
 * - Turning quota off clears the copy and the flag in one transaction.
 * Start-up recovery (recoverEnforcement) therefore only has to finish the volumes whose state is not final.
 */

const onlyIfEnabled = (volumeUuid: string) => ({ uuid: volumeUuid, quotaEnabled: true });

/** In a rule change's transaction: a volume with quota on now has a resize pending. */
export async function markResizing(tx: Tx, volumeUuid: string): Promise<void> {
  await tx.volume.updateMany({ where: onlyIfEnabled(volumeUuid), data: { quotaState: "resizing" } });
}

/** The users of rule `r` as the JSON array the copy keeps ([{"name":…} | {"id":…}] in position order), per dialect. */
const USERS_JSON = {
  sqlite: `(SELECT json_group_array(json(u.o)) FROM (SELECT CASE WHEN "userId" IS NOT NULL THEN json_object('id', "userId") ELSE json_object('name', "name") END AS o
            FROM "QuotaRuleUser" WHERE "ruleUuid" = r."uuid" ORDER BY "position") u)`,
  postgresql: `(SELECT COALESCE(json_agg(CASE WHEN "userId" IS NOT NULL THEN json_build_object('id', "userId") ELSE json_build_object('name', "name") END ORDER BY "position"), '[]')::text
            FROM "QuotaRuleUser" WHERE "ruleUuid" = r."uuid")`,
};

/**
 * Rewrites the volume's copy in two statements that run inside the database. Done through Prisma row by row,
 * the copy cost ~80 ms of server CPU per rule change at 200 rules (every statement of SQLite runs on the event
 * loop, and the transaction holds the one connection meanwhile): the main latency source under load
 * (docs/benchmarks.md, "Soak").
 */
async function copyRules(tx: Tx, volumeUuid: string, postgres: boolean) {
  await tx.enforcedQuota.deleteMany({ where: { volumeUuid } });
  await tx.$executeRawUnsafe(
    `INSERT INTO "EnforcedQuota" ("ruleUuid", "volumeUuid", "reportIndex", "type", "qtreeName", "usersJson", "groupName", "groupId",
       "spaceHardLimit", "spaceSoftLimit", "filesHardLimit", "filesSoftLimit")
     SELECT r."uuid", r."volumeUuid", ROW_NUMBER() OVER (ORDER BY r."createdAt", r."uuid") - 1, r."type", r."qtreeName",
       ${postgres ? USERS_JSON.postgresql : USERS_JSON.sqlite}, r."groupName", r."groupId",
       r."spaceHardLimit", r."spaceSoftLimit", r."filesHardLimit", r."filesSoftLimit"
     FROM "QuotaRule" r WHERE r."volumeUuid" = $1`,
    volumeUuid,
  );
}

/**
 * Copies the committed rules into enforcement and sets the state `on`, if quota is (still) on. The first statement
 * locks the volume row (PostgreSQL; SQLite runs one write transaction at a time), so it also waits for a rule
 * change or quota-off in flight and then sees its outcome.
 */
async function enforce(ctx: AppContext, volume: { uuid: string; svmUuid: string }): Promise<void> {
  const enforced = await ctx.db.$transaction(async (tx) => {
    const { count } = await tx.volume.updateMany({ where: onlyIfEnabled(volume.uuid), data: { quotaState: "on" } });
    if (count) await copyRules(tx, volume.uuid, isPostgresUrl(ctx.config.databaseUrl));
    return count > 0;
  });
  if (enforced) await publishQuotaChange(ctx, { kind: "VOLUME_QUOTA_CHANGED", svmUuid: volume.svmUuid, volumeUuid: volume.uuid });
}

async function turnOff(ctx: AppContext, volume: { uuid: string; svmUuid: string }): Promise<void> {
  await ctx.db.$transaction(async (tx) => {
    await tx.volume.update({ where: { uuid: volume.uuid }, data: { quotaEnabled: false, quotaState: "off" } });
    await tx.enforcedQuota.deleteMany({ where: { volumeUuid: volume.uuid } });
  });
  await publishQuotaChange(ctx, { kind: "VOLUME_QUOTA_CHANGED", svmUuid: volume.svmUuid, volumeUuid: volume.uuid });
}

/**
 * Turning quota on initializes enforcement from the current rules (off → initializing → on); turning it off
 * clears enforcement. Runs inside a job.
 */
export async function setQuotaEnabled(ctx: AppContext, volumeUuid: string, enabled: boolean) {
  const volume = await getVolume(ctx, volumeUuid);
  if (!enabled) return turnOff(ctx, volume);
  if (!(await ctx.db.quotaRule.count({ where: { volumeUuid } }))) {
    throw new ConflictError(`No valid quota rules found in quota policy default for volume ${volume.name} in SVM ${volume.svm.name}.`, {
      code: CODES.noQuotaRules,
      target: "quota.enabled",
    });
  }
  await ctx.db.volume.update({ where: { uuid: volumeUuid }, data: { quotaEnabled: true, quotaState: "initializing" } });
  await publishQuotaChange(ctx, { kind: "VOLUME_QUOTA_CHANGED", svmUuid: volume.svmUuid, volumeUuid });
  await enforce(ctx, volume);
}

/**
 * Resizes of one volume in this process are coalesced: while a copy runs, every request that arrives joins the one
 * queued after it, which reads every rule committed before it starts. A hundred concurrent rule creates thus cost
 * two or three copies instead of a hundred transactions queueing on the volume's lock.
 */
export class ResizeQueue {
  private volumes = new Map<string, { current: Promise<void>; queued?: Promise<void> }>();

  run(volumeUuid: string, copy: () => Promise<void>): Promise<void> {
    const entry = this.volumes.get(volumeUuid);
    if (entry?.queued) return entry.queued;
    if (!entry) {
      const current: Promise<void> = copy().finally(() => this.settle(volumeUuid, current));
      this.volumes.set(volumeUuid, { current });
      return current;
    }
    const queued: Promise<void> = entry.current
      .catch(() => {})
      .then(() => {
        entry.current = queued;
        entry.queued = undefined;
        return copy();
      })
      .finally(() => this.settle(volumeUuid, queued));
    entry.queued = queued;
    return queued;
  }

  private settle(volumeUuid: string, done: Promise<void>) {
    const entry = this.volumes.get(volumeUuid);
    if (entry?.current === done && !entry.queued) this.volumes.delete(volumeUuid);
  }
}

/** After a rule change (already marked `resizing`): a volume with quota on gets the new limits (resizing → on). */
export async function resizeIfEnabled(ctx: AppContext, volumeUuid: string) {
  await ctx.services.storage.resizes.run(volumeUuid, async () => {
    const volume = await ctx.db.volume.findUnique({ where: { uuid: volumeUuid } });
    if (!volume?.quotaEnabled) return;
    await publishQuotaChange(ctx, { kind: "VOLUME_QUOTA_CHANGED", svmUuid: volume.svmUuid, volumeUuid });
    await enforce(ctx, volume);
  });
}

/**
 * Start-up: finishes what a crash interrupted. A volume with quota on in a transient state (initializing,
 * resizing) gets its copy rebuilt from the committed rules; one with quota off but a state left behind is set
 * off. Safe when other instances share the database: rebuilding the copy of a volume another instance is resizing
 * yields the same copy (both read the committed rules under the volume lock). Returns the volumes repaired.
 */
export async function recoverEnforcement(ctx: AppContext): Promise<string[]> {
  const unsettled = await ctx.db.volume.findMany({
    where: { OR: [{ quotaEnabled: true, quotaState: { not: "on" } }, { quotaEnabled: false, quotaState: { not: "off" } }] },
  });
  for (const volume of unsettled) {
    if (volume.quotaEnabled) await enforce(ctx, volume);
    else await turnOff(ctx, volume);
  }
  return unsettled.map((v) => v.uuid);
}
