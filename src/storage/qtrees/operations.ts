import type { AppContext } from "../../platform/context.js";
import { publishObjectChange } from "../core/events.js";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { parseInput } from "../core/input.js";
import { startJob, type StartedJob } from "../jobs/operations.js";
import { CODES } from "../core/codes.js";
import { ruleIdentity } from "../quota-rules/identity.js";
import { resolveSvm } from "../svms/operations.js";
import { markResizing, resizeIfEnabled } from "../volumes/enforcement.js";
import { resolveVolume } from "../volumes/operations.js";
import { createQtreeSchema, updateQtreeSchema, type CreateQtreeInput, type UpdateQtreeInput } from "./schema.js";

export const qtreeKey = (volumeUuid: string, id: number) => `${volumeUuid}/${id}`;

export async function getQtree(ctx: AppContext, volumeUuid: string, id: number) {
  const qtree = await ctx.db.qtree.findUnique({ where: { key: qtreeKey(volumeUuid, id) }, include: { volume: { include: { svm: true } } } });
  if (!qtree) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "id" });
  return qtree;
}

export async function createQtree(ctx: AppContext, given: CreateQtreeInput) {
  const input = parseInput(createQtreeSchema, given);
  const svm = await resolveSvm(ctx, input.svm);
  const volume = await resolveVolume(ctx, svm, input.volume);
  const qtree = await ctx.db.$transaction(async (tx) => {
    if (await tx.qtree.findFirst({ where: { volumeUuid: volume.uuid, name: input.name } })) {
      throw new ConflictError(`Qtree "${input.name}" already exists in volume "${volume.name}".`, { code: CODES.duplicateName, target: "name", reason: "already_exists" });
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
  await publishObjectChange(ctx, { kind: "qtree", key: qtreeKey(qtree.volumeUuid, qtree.qtreeId) });
  return qtree;
}

const qtreeJob = (action: "update" | "delete", q: { volumeUuid: string; qtreeId: number }) =>
  ({ action, resource: "qtree", key: `${q.volumeUuid}/${q.qtreeId}` }) as const;

/** Runs as the returned job. Renaming a qtree renames the rules that target it, as the quota policy follows the qtree. */
export async function updateQtree(ctx: AppContext, volumeUuid: string, id: number, given: UpdateQtreeInput): Promise<StartedJob> {
  const patch = parseInput(updateQtreeSchema, given);
  const qtree = await getQtree(ctx, volumeUuid, id);
  return startJob(ctx, qtreeJob("update", qtree), qtree.volume.svmUuid, async () => {
    const renamed = patch.name !== undefined && patch.name !== qtree.name;
    await ctx.db.$transaction(async (tx) => {
      if (renamed && (await tx.qtree.findFirst({ where: { volumeUuid, name: patch.name } }))) {
        throw new ConflictError(`Qtree "${patch.name}" already exists in volume "${qtree.volume.name}".`, { code: CODES.duplicateName, target: "name", reason: "already_exists" });
      }
      if (renamed) {
        await renameRuleScope(tx, volumeUuid, qtree.name, patch.name!);
        await markResizing(tx, volumeUuid);
      }
      await tx.qtree.update({ where: { key: qtree.key }, data: patch });
    });
    await publishObjectChange(ctx, { kind: "qtree", key: qtree.key });
    if (renamed) await resizeIfEnabled(ctx, volumeUuid);
  });
}

/** Runs as the returned job. Deleting a qtree removes the quota rules scoped to it. */
export async function deleteQtree(ctx: AppContext, volumeUuid: string, id: number): Promise<StartedJob> {
  const qtree = await getQtree(ctx, volumeUuid, id);
  return startJob(ctx, qtreeJob("delete", qtree), qtree.volume.svmUuid, async () => {
    await ctx.db.$transaction(async (tx) => {
      const { count } = await tx.quotaRule.deleteMany({ where: { volumeUuid, qtreeName: qtree.name } });
      await tx.qtree.delete({ where: { key: qtree.key } });
      if (count) await markResizing(tx, volumeUuid);
    });
    await publishObjectChange(ctx, { kind: "qtree", key: qtree.key }); // the rules scoped to it went with it
    await resizeIfEnabled(ctx, volumeUuid);
  });
}

/** The rules scoped to a renamed qtree follow it, identity included (it embeds the name), in the rename's transaction. */
async function renameRuleScope(tx: Tx, volumeUuid: string, from: string, to: string) {
  const rules = await tx.quotaRule.findMany({ where: { volumeUuid, qtreeName: from }, include: { users: true } });
  for (const r of rules) {
    await tx.quotaRule.update({ where: { uuid: r.uuid }, data: { qtreeName: to, identity: ruleIdentity({ ...r, qtreeName: to }, r.users) } });
  }
}
