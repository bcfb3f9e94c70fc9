import type { Job, Volume } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder, usableQuery } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { DELETED_IDS } from "../core/graphql.js";
import { fieldNames, inTermsOf } from "../core/input.js";
import { JOB_DESCRIPTION, JobRef, jobWithin, RETURN_TIMEOUT_DESCRIPTION, returnTimeoutOf } from "../jobs/graphql.js";
import { SvmSelector, svmSelection } from "../svms/graphql.js";
import { createVolume, deleteVolume, getVolume, updateVolume } from "./operations.js";
import type { UpdateVolumeInput } from "./schema.js";

export const QuotaState = builder.enumType("QuotaState", {
  description: "Whether a volume's quota rules are enforced (ONTAP's quota states)",
  values: {
    OFF: { description: "Quotas are not enforced: rules are kept but nothing is limited" },
    INITIALIZING: { description: "Quotas are being turned on: the volume's usage is being scanned" },
    ON: { description: "Quotas are enforced: writes beyond a hard limit fail" },
    RESIZING: { description: "Changed rules are being applied to the enforced quotas" },
    MIXED: { description: "Some of the volume's qtrees enforce quotas and others not" },
    CORRUPT: { description: "Enforcement failed; turn quota off and on again" },
  } as const,
});

export const VolumeRef = builder.prismaNode("Volume", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A storage volume of an SVM: a file system whose space and files quota rules limit, per user, group or qtree",
  id: { field: "uuid", description: "The volume's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    uuid: t.exposeID("uuid", { description: "The volume's ONTAP uuid: the `volume.uuid` of the ONTAP REST API" }),
    name: t.exposeString("name", { description: "The volume's name, unique in its SVM" }),
    svm: t.relation("svm", { description: "The SVM the volume belongs to" }),
    sizeBytes: t.expose("sizeBytes", { type: "BigInt", nullable: true, description: "The volume's size, in bytes (null: not set)" }),
    quotaEnabled: t.exposeBoolean("quotaEnabled", { description: "Whether the volume's quota rules are switched on" }),
    quotaState: t.field({ type: QuotaState, description: "Where quota enforcement stands", resolve: (v) => v.quotaState.toUpperCase() as "OFF" }),
    qtrees: t.relatedConnection("qtrees", { cursor: "key", description: "The volume's qtrees by qtree id", query: { orderBy: { qtreeId: "asc" } }, totalCount: true }),
  }),
});

export const VolumeSelector = builder.inputType("VolumeSelector", {
  description: "A volume by name (within the SVM) or id (both given: they must name the same volume)",
  fields: (t) => ({ name: t.string({ description: "The volume's name within the SVM" }), id: t.id({ description: "The volume's id (its global id, or its uuid)" }) }),
});

/** A VolumeSelector as the operations take it (name and/or uuid). */
export const volumeSelection = (s: typeof VolumeSelector.$inferInput | null | undefined) => ({
  ...(s?.name != null ? { name: s.name } : {}),
  ...(s?.id != null ? { uuid: domainId(s.id, "Volume", "volume.id") } : {}),
});

/** A volume id argument as the operations take it: the uuid. */
export const volumeUuidOf = (id: string | number, target = "id") => domainId(id, "Volume", target);

const volumeWhere = (svm: typeof SvmSelector.$inferInput | null | undefined) => {
  const { name, uuid } = svmSelection(svm);
  return { ...(uuid ? { svmUuid: uuid } : {}), ...(name ? { svm: { name } } : {}) };
};

builder.queryFields((t) => ({
  volumes: t.prismaConnection(
    {
      type: "Volume",
      cursor: "uuid",
      description: "Volumes by name (then uuid), of one SVM when `svm` is given",
      args: { svm: t.arg({ type: SvmSelector, description: "Only this SVM's volumes" }) },
      resolve: (query, _r, args, ctx) => ctx.db.volume.findMany({ ...usableQuery(query), where: volumeWhere(args.svm), orderBy: [{ name: "asc" }, { uuid: "asc" }] }),
      totalCount: (_r, args, ctx) => ctx.db.volume.count({ where: volumeWhere(args.svm) }),
    },
    {},
  ),
  volume: t.prismaField({
    type: "Volume",
    nullable: true,
    description: lookupDescription("One volume"),
    args: { id: t.arg.id({ required: true, description: "The volume's id (its global id, or its uuid)" }) },
    resolve: (_q, _r, args, ctx) => orNull(() => getVolume(ctx, volumeUuidOf(args.id))),
  }),
}));

const CreateVolumeInput = builder.inputType("CreateVolumeInput", {
  description: "A new volume, quota off",
  fields: (t) => ({
    svm: t.field({ type: SvmSelector, required: true, description: "The SVM to create it in" }),
    name: t.string({ required: true, description: "The volume's name: a letter or _, then letters, digits or _ (a taken one in the SVM is refused: ALREADY_EXISTS)" }),
    sizeBytes: t.field({ type: "BigInt", description: "The volume's size, in bytes (at least 20 MB)" }),
  }),
});
const SetVolumeQuotaInput = builder.inputType("SetVolumeQuotaInput", {
  description: "A volume and whether its quota rules are enforced",
  fields: (t) => ({
    id: t.id({ required: true, description: "The volume's id (its global id, or its uuid)" }),
    enabled: t.boolean({ required: true, description: "true: enforce the volume's quota rules (it needs at least one); false: stop enforcing them" }),
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
  }),
});
const ResizeVolumeInput = builder.inputType("ResizeVolumeInput", {
  description: "A volume and its new size",
  fields: (t) => ({
    id: t.id({ required: true, description: "The volume's id (its global id, or its uuid)" }),
    sizeBytes: t.field({ type: "BigInt", required: true, description: "The new size, in bytes (at least 20 MB)" }),
    returnTimeoutSeconds: t.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
  }),
});
const DeleteVolumeInput = builder.inputType("DeleteVolumeInput", {
  description: "The volume to delete",
  fields: (t) => ({ id: t.id({ required: true, description: "The volume's id (its global id, or its uuid)" }) }),
});

/** The operations report domain paths; this face names the size with its unit. */
const GRAPHQL_NAMES = fieldNames({ size: "sizeBytes" });

/** setVolumeQuota and resizeVolume answer the volume as the job left it, and the job. */
const volumeJobPayload = (name: string, description: string) =>
  payloadType<{ volume: Volume; job: Job }>(name, description, (t) => ({
    volume: t.field({ type: VolumeRef, description: "The volume as it stands after the wait (quotaState follows the job)", resolve: (p) => p.volume }),
    job: t.field({ type: JobRef, description: JOB_DESCRIPTION, resolve: (p) => p.job }),
  }));

builder.mutationFields((t) => ({
  createVolume: t.field({
    type: payloadType<{ volume: Volume }>("createVolume", "What `createVolume` made: the volume", (t) => ({
      volume: t.field({ type: VolumeRef, description: "The new volume, quota off", resolve: (p) => p.volume }),
    })),
    description: "Creates a volume in an SVM, quota off",
    errors: mutationErrors("createVolume", [InvalidInputError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: CreateVolumeInput, required: true, description: "The new volume" }) },
    resolve: async (_r, { input }, ctx) => ({
      volume: await inTermsOf(GRAPHQL_NAMES, () => createVolume(ctx, { svm: svmSelection(input.svm), name: input.name, ...(input.sizeBytes != null ? { size: input.sizeBytes } : {}) })),
    }),
  }),
  setVolumeQuota: t.field({
    type: volumeJobPayload("setVolumeQuota", "What `setVolumeQuota` changed: the volume, and the job that turns enforcement on or off"),
    description: "Turns quota on (enforce the current rules) or off (clear enforcement), as a job; ConflictError when turning on a volume without rules",
    errors: mutationErrors("setVolumeQuota", [InvalidInputError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: SetVolumeQuotaInput, required: true, description: "The volume and the quota switch" }) },
    resolve: (_r, { input }, ctx) => changeVolume(ctx, input, { quotaEnabled: input.enabled }),
  }),
  resizeVolume: t.field({
    type: volumeJobPayload("resizeVolume", "What `resizeVolume` changed: the volume, and the job of the change"),
    description: "Sets a volume's size (at once; the job is ONTAP's answer to every volume change)",
    errors: mutationErrors("resizeVolume", [InvalidInputError, NotFoundError]),
    args: { input: t.arg({ type: ResizeVolumeInput, required: true, description: "The volume and its size" }) },
    resolve: (_r, { input }, ctx) => changeVolume(ctx, input, { size: input.sizeBytes }),
  }),
  deleteVolume: t.field({
    type: payloadType<{ deletedIds: string[] }>("deleteVolume", "What `deleteVolume` removed: the volume, its qtrees, quota rules and report entries", (t) => ({
      deletedIds: t.idList({ description: DELETED_IDS, resolve: (p) => p.deletedIds }),
    })),
    description: "Deletes a volume with its qtrees, quota rules and quota report",
    errors: mutationErrors("deleteVolume", [InvalidInputError, NotFoundError]),
    args: { input: t.arg({ type: DeleteVolumeInput, required: true, description: "The volume" }) },
    resolve: async (_r, { input }, ctx) => {
      const uuid = volumeUuidOf(input.id);
      const contents = await volumeContents(ctx, uuid);
      await deleteVolume(ctx, uuid);
      return { deletedIds: [globalId("Volume", uuid), ...contents] };
    },
  }),
}));

/** A volume change is answered with its job (REST's PATCH): quota on/off runs in it, a new size is set at once. */
async function changeVolume(ctx: AppContext, input: { id: string | number; returnTimeoutSeconds?: number | null }, patch: UpdateVolumeInput) {
  const timeout = returnTimeoutOf(input.returnTimeoutSeconds);
  const uuid = volumeUuidOf(input.id);
  const job = await jobWithin(await inTermsOf(GRAPHQL_NAMES, () => updateVolume(ctx, uuid, patch)), timeout);
  return { volume: await getVolume(ctx, uuid), job };
}

/** The global ids of what a volume's delete takes along (read just before it: what it removes with the volume). */
async function volumeContents(ctx: AppContext, uuid: string): Promise<string[]> {
  const where = { where: { volumeUuid: uuid } };
  const [qtrees, rules, reports] = await Promise.all([
    ctx.db.qtree.findMany({ ...where, select: { key: true } }),
    ctx.db.quotaRule.findMany({ ...where, select: { uuid: true } }),
    ctx.db.enforcedQuota.findMany({ ...where, select: { ruleUuid: true } }),
  ]);
  return [
    ...qtrees.map((q) => globalId("Qtree", q.key)),
    ...rules.map((r) => globalId("QuotaRule", r.uuid)),
    ...reports.map((r) => globalId("QuotaReport", r.ruleUuid)),
  ];
}
