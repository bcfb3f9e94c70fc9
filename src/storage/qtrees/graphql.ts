import type { Job, Qtree } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder, usableQuery } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { CODES } from "../core/codes.js";
import { DELETED_IDS } from "../core/graphql.js";
import { withReportEntries } from "../quota-rules/mutations-graphql.js";
import { JOB_DESCRIPTION, JobRef, jobWithin, RETURN_TIMEOUT_DESCRIPTION, returnTimeoutOf } from "../jobs/graphql.js";
import { SvmSelector, svmSelection } from "../svms/graphql.js";
import { VolumeSelector, volumeSelection, volumeUuidOf } from "../volumes/graphql.js";
import { createQtree, deleteQtree, getQtree, updateQtree } from "./operations.js";
import type { SecurityStyle as SecurityStyleValue, UpdateQtreeInput } from "./schema.js";

const SecurityStyle = builder.enumType("SecurityStyle", {
  description: "Which permissions govern a qtree's files",
  values: {
    UNIX: { description: "UNIX mode bits (NFS clients)" },
    NTFS: { description: "Windows ACLs (SMB clients)" },
    MIXED: { description: "Either, as each file was last set" },
  } as const,
});

// The database key ("<volume uuid>/<qtree id>") makes the global id: a qtree id alone repeats in every volume.
export const QtreeRef = builder.prismaNode("Qtree", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A directory of a volume that tree quota rules can limit as a whole",
  id: { field: "key", description: "The qtree's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    qtreeId: t.exposeInt("qtreeId", { description: "The qtree's number within its volume: the `id` of the ONTAP REST API (repeats across volumes)" }),
    name: t.exposeString("name", { description: "The qtree's name: its directory at the volume's root" }),
    securityStyle: t.field({ type: SecurityStyle, description: "Which permissions govern its files", resolve: (q) => q.securityStyle.toUpperCase() as "UNIX" }),
    unixPermissions: t.exposeInt("unixPermissions", { description: "The directory's UNIX mode bits (e.g. 493 = 0755)" }),
    volume: t.relation("volume", { description: "The volume the qtree is in" }),
  }),
});

const QTREE_ID = "The qtree's id: its global id, or `<volume uuid>/<qtree id>`";

/** The qtree an id argument names, as the operations address it; NotFoundError when there is none. */
async function qtreeAddress(ctx: AppContext, id: string | number) {
  const key = domainId(id, "Qtree", "id");
  const qtree = await ctx.db.qtree.findUnique({ where: { key }, select: { key: true, volumeUuid: true, qtreeId: true, name: true } });
  if (!qtree) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "id" });
  return qtree;
}

const qtreeWhere = (volumeId: string | number | null | undefined) => (volumeId == null ? {} : { volumeUuid: volumeUuidOf(volumeId, "volumeId") });

builder.queryFields((t) => ({
  qtrees: t.prismaConnection(
    {
      type: "Qtree",
      cursor: "key",
      description: "Qtrees by volume and qtree id, of one volume when volumeId is given",
      args: { volumeId: t.arg.id({ description: "Only this volume's qtrees (its global id, or its uuid)" }) },
      resolve: (query, _r, args, ctx) =>
        ctx.db.qtree.findMany({ ...usableQuery(query), where: qtreeWhere(args.volumeId), orderBy: [{ volumeUuid: "asc" }, { qtreeId: "asc" }] }),
      totalCount: (_r, args, ctx) => ctx.db.qtree.count({ where: qtreeWhere(args.volumeId) }),
    },
    {},
  ),
  qtree: t.prismaField({
    type: "Qtree",
    nullable: true,
    description: lookupDescription("One qtree"),
    args: { id: t.arg.id({ required: true, description: QTREE_ID }) },
    resolve: (_q, _r, args, ctx) =>
      orNull(async () => {
        const { volumeUuid, qtreeId } = await qtreeAddress(ctx, args.id);
        return getQtree(ctx, volumeUuid, qtreeId);
      }),
  }),
}));

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
/** The settings create and update take. */
const settingFields = (t: PothosSchemaTypes.InputFieldBuilder<Types, "InputObject">) => ({
  securityStyle: t.field({ type: SecurityStyle, description: "Which permissions govern its files" }),
  unixPermissions: t.int({ description: "The directory's UNIX mode bits (e.g. 493 = 0755)" }),
});
type QtreeSettings = { securityStyle?: "UNIX" | "NTFS" | "MIXED" | null; unixPermissions?: number | null };
const qtreeSettings = (input: QtreeSettings) => ({
  ...(input.securityStyle ? { securityStyle: input.securityStyle.toLowerCase() as SecurityStyleValue } : {}),
  ...(input.unixPermissions != null ? { unixPermissions: input.unixPermissions } : {}),
});

const CreateQtreeInput = builder.inputType("CreateQtreeInput", {
  description: "A new qtree: a directory at a volume's root (settings omitted: the volume's)",
  fields: (t) => ({
    svm: t.field({ type: SvmSelector, required: true, description: "The volume's SVM" }),
    volume: t.field({ type: VolumeSelector, required: true, description: "The volume to create it in" }),
    name: t.string({ required: true, description: "The qtree's name (a taken one in the volume is refused: ALREADY_EXISTS)" }),
    ...settingFields(t),
  }),
});
const RenameQtreeInput = builder.inputType("RenameQtreeInput", {
  description: "A qtree and its new name",
  fields: (t) => ({
    id: t.id({ required: true, description: QTREE_ID }),
    name: t.string({ required: true, description: "The new name (a taken one in the volume is refused: ALREADY_EXISTS)" }),
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
  }),
});
const UpdateQtreeInput = builder.inputType("UpdateQtreeInput", {
  description: "A qtree and the settings to change (omitted ones stay)",
  fields: (t) => ({
    id: t.id({ required: true, description: QTREE_ID }),
    ...settingFields(t),
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
  }),
});
const DeleteQtreeInput = builder.inputType("DeleteQtreeInput", {
  description: "The qtree to delete",
  fields: (t) => ({
    id: t.id({ required: true, description: QTREE_ID }),
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
  }),
});

/** renameQtree and updateQtree answer the qtree as the job left it, and the job. */
const qtreeJobPayload = (name: string, description: string) =>
  payloadType<{ qtree: Qtree; job: Job }>(name, description, (t) => ({
    qtree: t.field({ type: QtreeRef, description: "The qtree as it stands after the wait: changed once the job ended", resolve: (p) => p.qtree }),
    job: t.field({ type: JobRef, description: JOB_DESCRIPTION, resolve: (p) => p.job }),
  }));

builder.mutationFields((t) => ({
  createQtree: t.field({
    type: payloadType<{ qtree: Qtree }>("createQtree", "What `createQtree` made: the qtree", (t) => ({
      qtree: t.field({ type: QtreeRef, description: "The new qtree", resolve: (p) => p.qtree }),
    })),
    description: "Creates a qtree (a directory at the volume's root)",
    errors: mutationErrors("createQtree", [InvalidInputError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: CreateQtreeInput, required: true, description: "The new qtree" }) },
    resolve: async (_r, { input }, ctx) => ({
      qtree: await createQtree(ctx, { svm: svmSelection(input.svm), volume: volumeSelection(input.volume), name: input.name, ...qtreeSettings(input) }),
    }),
  }),
  renameQtree: t.field({
    type: qtreeJobPayload("renameQtree", "What `renameQtree` changed: the qtree, and the job that renames it"),
    description: "Renames a qtree; the quota rules scoped to it follow. The rename runs in the job",
    errors: mutationErrors("renameQtree", [InvalidInputError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: RenameQtreeInput, required: true, description: "The qtree and its new name" }) },
    resolve: (_r, { input }, ctx) => changeQtree(ctx, input, { name: input.name }),
  }),
  updateQtree: t.field({
    type: qtreeJobPayload("updateQtree", "What `updateQtree` changed: the qtree, and the job that changes it"),
    description: "Changes a qtree's security style or UNIX permissions. The change runs in the job",
    errors: mutationErrors("updateQtree", [InvalidInputError, NotFoundError]),
    args: { input: t.arg({ type: UpdateQtreeInput, required: true, description: "The qtree and its settings" }) },
    resolve: (_r, { input }, ctx) => changeQtree(ctx, input, qtreeSettings(input)),
  }),
  deleteQtree: t.field({
    type: payloadType<{ deletedIds: string[]; job: Job }>("deleteQtree", "What `deleteQtree` removes: the qtree, the quota rules scoped to it and their report entries, and the job that removes them", (t) => ({
      deletedIds: t.idList({ description: DELETED_IDS, resolve: (p) => p.deletedIds }),
      job: t.field({ type: JobRef, description: JOB_DESCRIPTION, resolve: (p) => p.job }),
    })),
    description: "Deletes a qtree and the quota rules scoped to it, in a job",
    errors: mutationErrors("deleteQtree", [InvalidInputError, NotFoundError]),
    args: { input: t.arg({ type: DeleteQtreeInput, required: true, description: "The qtree" }) },
    resolve: async (_r, { input }, ctx) => {
      const timeout = returnTimeoutOf(input.returnTimeoutSeconds);
      const { key, volumeUuid, qtreeId, name } = await qtreeAddress(ctx, input.id);
      const rules = await ctx.db.quotaRule.findMany({ where: { volumeUuid, qtreeName: name }, select: { uuid: true } });
      const { job, reportIds } = await withReportEntries(ctx, { volumeUuid, qtreeName: name }, async () => jobWithin(await deleteQtree(ctx, volumeUuid, qtreeId), timeout));
      return { deletedIds: [globalId("Qtree", key), ...rules.map((r) => globalId("QuotaRule", r.uuid)), ...reportIds], job };
    },
  }),
}));

/** A qtree change runs as a job (REST's PATCH): the qtree as it is after the wait, with the job. */
async function changeQtree(ctx: AppContext, input: { id: string | number; returnTimeoutSeconds?: number | null }, patch: UpdateQtreeInput) {
  const timeout = returnTimeoutOf(input.returnTimeoutSeconds);
  const { volumeUuid, qtreeId } = await qtreeAddress(ctx, input.id);
  const job = await jobWithin(await updateQtree(ctx, volumeUuid, qtreeId, patch), timeout);
  return { qtree: await getQtree(ctx, volumeUuid, qtreeId), job };
}
