import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import { publishObjectChange } from "../core/events.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { FieldError, parseInput } from "../core/input.js";
import { CODES } from "../core/codes.js";
import { createSvmSchema, type CreateSvmInput } from "./schema.js";

export interface SvmRef {
  uuid?: string;
  name?: string;
}

/** Finds an SVM by uuid or name (either suffices; both must agree when given). */
export async function resolveSvm(ctx: AppContext, ref: SvmRef | undefined) {
  if (!ref?.uuid && !ref?.name) throw new FieldError(["svm", "name"], { kind: "missing", or: ["svm", "uuid"] });
  const svm = await ctx.db.svm.findFirst({ where: { ...(ref.uuid ? { uuid: ref.uuid } : {}), ...(ref.name ? { name: ref.name } : {}) } });
  if (!svm) throw new NotFoundError(`SVM "${ref.name ?? ref.uuid}" does not exist.`, { code: CODES.svmNotFound, target: "svm" });
  return svm;
}

export async function getSvm(ctx: AppContext, uuid: string) {
  const svm = await ctx.db.svm.findUnique({ where: { uuid } });
  if (!svm) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "uuid" });
  return svm;
}

export async function createSvm(ctx: AppContext, given: CreateSvmInput) {
  const { name } = parseInput(createSvmSchema, given);
  if (await ctx.db.svm.findUnique({ where: { name } })) {
    throw new ConflictError(`SVM "${name}" already exists.`, { code: CODES.duplicateName, target: "name", reason: "already_exists" });
  }
  const svm = await ctx.db.svm.create({ data: { uuid: randomUUID(), name } });
  await publishObjectChange(ctx, { kind: "svm", key: svm.uuid });
  return svm;
}

export async function deleteSvm(ctx: AppContext, uuid: string) {
  const svm = await getSvm(ctx, uuid);
  if (await ctx.db.volume.count({ where: { svmUuid: uuid } })) {
    throw new ConflictError(`SVM "${svm.name}" still has volumes; delete them first.`, { code: CODES.hasDependents, target: "uuid" });
  }
  await ctx.db.svm.delete({ where: { uuid } });
  await publishObjectChange(ctx, { kind: "svm", key: uuid });
}

export const svmRef = (svm: { uuid: string; name: string }) => ({
  name: svm.name,
  uuid: svm.uuid,
  _links: { self: { href: `/api/svm/svms/${svm.uuid}` } },
});
