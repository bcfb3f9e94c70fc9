import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/errors.js";
import { CODES } from "../ontap/codes.js";
import { publishQuotaChange } from "../events.js";
import { resolveSvm, type SvmRef } from "../svms/operations.js";

export interface VolumeRef {
  uuid?: string;
  name?: string;
}

/** A volume by uuid or by name within the SVM. */
export async function resolveVolume(ctx: AppContext, svm: { uuid: string; name: string }, ref: VolumeRef | undefined) {
  if (!ref?.uuid && !ref?.name) {
    throw new InvalidInputError(`Missing required field "volume.name" or "volume.uuid".`, { code: CODES.missingField, target: "volume.name" });
  }
  const volume = await ctx.db.volume.findFirst({
    where: { svmUuid: svm.uuid, ...(ref.uuid ? { uuid: ref.uuid } : {}), ...(ref.name ? { name: ref.name } : {}) },
  });
  if (!volume) {
    throw new NotFoundError(`Volume "${ref.name ?? ref.uuid}" does not exist in SVM "${svm.name}".`, { code: CODES.volumeNotFound, target: "volume" });
  }
  return volume;
}

export async function getVolume(ctx: AppContext, uuid: string) {
  const volume = await ctx.db.volume.findUnique({ where: { uuid }, include: { svm: true } });
  if (!volume) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "uuid" });
  return volume;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,202}$/;

export async function createVolume(ctx: AppContext, input: { svm: SvmRef; name: string; size?: bigint }) {
  const svm = await resolveSvm(ctx, input.svm);
  if (!NAME.test(input.name)) throw new InvalidInputError(`Invalid volume name "${input.name}".`, { code: CODES.invalidValue, target: "name" });
  if (input.size !== undefined && input.size < 20n * 1024n * 1024n) {
    throw new InvalidInputError("Volume size must be at least 20MB.", { code: CODES.invalidValue, target: "size" });
  }
  if (await ctx.db.volume.findFirst({ where: { svmUuid: svm.uuid, name: input.name } })) {
    throw new ConflictError(`Volume "${input.name}" already exists in SVM "${svm.name}".`, { code: CODES.duplicateName, target: "name" });
  }
  return ctx.db.volume.create({ data: { uuid: randomUUID(), name: input.name, svmUuid: svm.uuid, sizeBytes: input.size ?? null }, include: { svm: true } });
}

export async function deleteVolume(ctx: AppContext, uuid: string) {
  await getVolume(ctx, uuid);
  await ctx.db.volume.delete({ where: { uuid } });
}

/**
 * The limits enforced in the file system are a copy of the rules taken when quota is turned on or resized;
 * quota reports read the copy, so rule changes made while quota is off are not enforced.
 */
async function enforceRules(tx: Tx, volumeUuid: string) {
  await tx.enforcedQuota.deleteMany({ where: { volumeUuid } });
  const rules = await tx.quotaRule.findMany({
    where: { volumeUuid },
    include: { users: { orderBy: { position: "asc" } } },
    orderBy: [{ createdAt: "asc" }, { uuid: "asc" }],
  });
  await tx.enforcedQuota.createMany({
    data: rules.map((r, i) => ({
      ruleUuid: r.uuid,
      volumeUuid,
      reportIndex: i,
      type: r.type,
      qtreeName: r.qtreeName,
      usersJson: JSON.stringify(r.users.map((u) => (u.userId !== null ? { id: u.userId } : { name: u.name }))),
      groupName: r.groupName,
      groupId: r.groupId,
      spaceHardLimit: r.spaceHardLimit,
      spaceSoftLimit: r.spaceSoftLimit,
      filesHardLimit: r.filesHardLimit,
      filesSoftLimit: r.filesSoftLimit,
    })),
  });
}

async function setState(ctx: AppContext, volume: { uuid: string; svmUuid: string }, quotaState: string, extra: object = {}) {
  await ctx.db.volume.update({ where: { uuid: volume.uuid }, data: { quotaState, ...extra } });
  await publishQuotaChange(ctx, { kind: "VOLUME_QUOTA_CHANGED", svmUuid: volume.svmUuid, volumeUuid: volume.uuid });
}

/**
 * Turning quota on initializes enforcement from the current rules (off → initializing → on); turning it off
 * clears enforcement. Runs inside a job.
 */
export async function setQuotaEnabled(ctx: AppContext, volumeUuid: string, enabled: boolean) {
  const volume = await getVolume(ctx, volumeUuid);
  if (!enabled) {
    await ctx.db.$transaction(async (tx) => {
      await tx.enforcedQuota.deleteMany({ where: { volumeUuid } });
      await tx.volume.update({ where: { uuid: volumeUuid }, data: { quotaEnabled: false } });
    });
    return setState(ctx, volume, "off");
  }
  if (!(await ctx.db.quotaRule.count({ where: { volumeUuid } }))) {
    throw new ConflictError(`No valid quota rules found in quota policy default for volume ${volume.name} in SVM ${volume.svm.name}.`, {
      code: CODES.noQuotaRules,
      target: "quota.enabled",
    });
  }
  await setState(ctx, volume, "initializing", { quotaEnabled: true });
  await ctx.db.$transaction((tx) => enforceRules(tx, volumeUuid));
  await setState(ctx, volume, "on");
}

/** After a rule change: a volume with quota on is resized (resizing → on) so the new limits take effect. */
export async function resizeIfEnabled(ctx: AppContext, volumeUuid: string) {
  const volume = await ctx.db.volume.findUnique({ where: { uuid: volumeUuid } });
  if (!volume?.quotaEnabled) return;
  await setState(ctx, volume, "resizing");
  await ctx.db.$transaction((tx) => enforceRules(tx, volumeUuid));
  await setState(ctx, volume, "on");
}
