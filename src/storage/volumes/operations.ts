import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import { publishObjectChange } from "../core/events.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { FieldError, parseInput } from "../core/input.js";
import { startJob, type StartedJob } from "../jobs/operations.js";
import { CODES } from "../core/codes.js";
import { resolveSvm } from "../svms/operations.js";
import { setQuotaEnabled } from "./enforcement.js";
import { createVolumeSchema, updateVolumeSchema, type CreateVolumeInput, type UpdateVolumeInput } from "./schema.js";

export interface VolumeRef {
  uuid?: string;
  name?: string;
}

/** A volume by uuid or by name within the SVM. */
export async function resolveVolume(ctx: AppContext, svm: { uuid: string; name: string }, ref: VolumeRef | undefined) {
  if (!ref?.uuid && !ref?.name) throw new FieldError(["volume", "name"], { kind: "missing", or: ["volume", "uuid"] });
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

export async function createVolume(ctx: AppContext, given: CreateVolumeInput) {
  const input = parseInput(createVolumeSchema, given);
  const svm = await resolveSvm(ctx, input.svm);
  if (await ctx.db.volume.findFirst({ where: { svmUuid: svm.uuid, name: input.name } })) {
    throw new ConflictError(`Volume "${input.name}" already exists in SVM "${svm.name}".`, { code: CODES.duplicateName, target: "name", reason: "already_exists" });
  }
  const volume = await ctx.db.volume.create({ data: { uuid: randomUUID(), name: input.name, svmUuid: svm.uuid, sizeBytes: input.size ?? null }, include: { svm: true } });
  await publishObjectChange(ctx, { kind: "volume", key: volume.uuid });
  return volume;
}

/**
 * A new size is written at once; turning quota on (enforce the current rules) or off (clear enforcement) runs in
 * the returned job — an empty one when quota is not part of the change, as ONTAP answers every PATCH with a job.
 */
export async function updateVolume(ctx: AppContext, uuid: string, given: UpdateVolumeInput): Promise<StartedJob> {
  const input = parseInput(updateVolumeSchema, given);
  const volume = await getVolume(ctx, uuid);
  if (input.size !== undefined) {
    await ctx.db.volume.update({ where: { uuid }, data: { sizeBytes: input.size } });
    await publishObjectChange(ctx, { kind: "volume", key: uuid });
  }
  const { quotaEnabled } = input;
  return startJob(ctx, { action: "update", resource: "volume", key: uuid }, volume.svmUuid, async () => {
    if (quotaEnabled !== undefined) await setQuotaEnabled(ctx, uuid, quotaEnabled);
  });
}

export async function deleteVolume(ctx: AppContext, uuid: string) {
  await getVolume(ctx, uuid);
  await ctx.db.volume.delete({ where: { uuid } });
  await publishObjectChange(ctx, { kind: "volume", key: uuid }); // its qtrees and rules went with it
}
