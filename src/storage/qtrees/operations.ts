import type { AppContext } from "../../platform/context.js";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/errors.js";
import { CODES } from "../ontap/codes.js";
import { ruleIdentity } from "../quota-rules/identity.js";
import { resolveSvm, type SvmRef } from "../svms/operations.js";
import { resizeIfEnabled, resolveVolume, type VolumeRef } from "../volumes/operations.js";

export const SECURITY_STYLES = ["unix", "ntfs", "mixed"] as const;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export const qtreeKey = (volumeUuid: string, id: number) => `${volumeUuid}/${id}`;

export async function getQtree(ctx: AppContext, volumeUuid: string, id: number) {
  const qtree = await ctx.db.qtree.findUnique({ where: { key: qtreeKey(volumeUuid, id) }, include: { volume: { include: { svm: true } } } });
  if (!qtree) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "id" });
  return qtree;
}

function checkName(name: string) {
  if (!NAME.test(name) || name === "." || name === "..") {
    throw new InvalidInputError(`Invalid qtree name "${name}".`, { code: CODES.invalidValue, target: "name" });
  }
}

export interface QtreeInput {
  svm: SvmRef;
  volume: VolumeRef;
  name: string;
  securityStyle?: string;
  unixPermissions?: number;
}

export async function createQtree(ctx: AppContext, input: QtreeInput) {
  checkName(input.name);
  const svm = await resolveSvm(ctx, input.svm);
  const volume = await resolveVolume(ctx, svm, input.volume);
  return ctx.db.$transaction(async (tx) => {
    if (await tx.qtree.findFirst({ where: { volumeUuid: volume.uuid, name: input.name } })) {
      throw new ConflictError(`Qtree "${input.name}" already exists in volume "${volume.name}".`, { code: CODES.duplicateName, target: "name" });
    }
    const last = await tx.qtree.findFirst({ where: { volumeUuid: volume.uuid }, orderBy: { qtreeId: "desc" } });
    const qtreeId = (last?.qtreeId ?? 0) + 1;
    return tx.qtree.create({
      data: {
        key: qtreeKey(volume.uuid, qtreeId),
        volumeUuid: volume.uuid,
        qtreeId,
        name: input.name,
        securityStyle: input.securityStyle ?? "unix",
        unixPermissions: input.unixPermissions ?? 755,
      },
      include: { volume: { include: { svm: true } } },
    });
  });
}

/** Renaming a qtree renames the rules that target it, as the quota policy follows the qtree. */
export async function updateQtree(
  ctx: AppContext,
  volumeUuid: string,
  id: number,
  patch: { name?: string; securityStyle?: string; unixPermissions?: number },
) {
  const qtree = await getQtree(ctx, volumeUuid, id);
  if (patch.name !== undefined) checkName(patch.name);
  const renamed = patch.name !== undefined && patch.name !== qtree.name;
  const updated = await ctx.db.$transaction(async (tx) => {
    if (renamed && (await tx.qtree.findFirst({ where: { volumeUuid, name: patch.name } }))) {
      throw new ConflictError(`Qtree "${patch.name}" already exists in volume "${qtree.volume.name}".`, { code: CODES.duplicateName, target: "name" });
    }
    if (renamed) await renameRuleScope(tx, volumeUuid, qtree.name, patch.name!);
    return tx.qtree.update({ where: { key: qtree.key }, data: patch, include: { volume: { include: { svm: true } } } });
  });
  if (renamed) await resizeIfEnabled(ctx, volumeUuid);
  return updated;
}

/** Deleting a qtree removes the quota rules scoped to it. */
export async function deleteQtree(ctx: AppContext, volumeUuid: string, id: number) {
  const qtree = await getQtree(ctx, volumeUuid, id);
  await ctx.db.$transaction([
    ctx.db.quotaRule.deleteMany({ where: { volumeUuid, qtreeName: qtree.name } }),
    ctx.db.qtree.delete({ where: { key: qtree.key } }),
  ]);
  await resizeIfEnabled(ctx, volumeUuid);
}

/** The rules scoped to a renamed qtree follow it, identity included (it embeds the name), in the rename's transaction. */
async function renameRuleScope(tx: Tx, volumeUuid: string, from: string, to: string) {
  const rules = await tx.quotaRule.findMany({ where: { volumeUuid, qtreeName: from }, include: { users: true } });
  for (const r of rules) {
    await tx.quotaRule.update({ where: { uuid: r.uuid }, data: { qtreeName: to, identity: ruleIdentity({ ...r, qtreeName: to }, r.users) } });
  }
}
