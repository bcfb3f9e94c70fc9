import type { AppContext } from "../../platform/context.js";
import { builder, DOMAIN_ERRORS, usableQuery } from "../../platform/graphql/builder.js";
import { jobWithin, RETURN_TIMEOUT_DESCRIPTION, returnTimeoutOf } from "../jobs/graphql.js";
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

builder.prismaObject("Volume", {
  description: "A storage volume of an SVM: a file system whose space and files quota rules limit, per user, group or qtree",
  fields: (t) => ({
    uuid: t.exposeID("uuid", { description: "The volume's uuid" }),
    name: t.exposeString("name", { description: "The volume's name, unique in its SVM" }),
    svm: t.relation("svm", { description: "The SVM the volume belongs to" }),
    size: t.expose("sizeBytes", { type: "BigInt", nullable: true, description: "The volume's size, in bytes (null: not set)" }),
    quotaEnabled: t.exposeBoolean("quotaEnabled", { description: "Whether the volume's quota rules are switched on" }),
    quotaState: t.field({ type: QuotaState, description: "Where quota enforcement stands", resolve: (v) => v.quotaState.toUpperCase() as "OFF" }),
    qtrees: t.relatedConnection("qtrees", { cursor: "key", description: "The volume's qtrees by id", query: { orderBy: { qtreeId: "asc" } }, totalCount: true }),
  }),
});

const SvmSelector = builder.inputType("SvmSelector", {
  description: "An SVM by name or uuid",
  fields: (t) => ({ name: t.string({ description: "The SVM's name" }), uuid: t.id({ description: "The SVM's uuid" }) }),
});
const VolumeSelector = builder.inputType("VolumeSelector", {
  description: "A volume by name (within the SVM) or uuid",
  fields: (t) => ({ name: t.string({ description: "The volume's name within the SVM" }), uuid: t.id({ description: "The volume's uuid" }) }),
});
const sel = (s: { name?: string | null; uuid?: string | number | null } | null | undefined) => ({
  ...(s?.name != null ? { name: s.name } : {}),
  ...(s?.uuid != null ? { uuid: String(s.uuid) } : {}),
});

const volumeWhere = (svm: { name?: string | null; uuid?: string | number | null } | null | undefined) => ({
  ...(svm?.uuid ? { svmUuid: String(svm.uuid) } : {}),
  ...(svm?.name ? { svm: { name: svm.name } } : {}),
});

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
    description: "One volume",
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true, description: "The volume's uuid" }) },
    resolve: (_q, _r, args, ctx) => getVolume(ctx, String(args.uuid)),
  }),
}));

builder.mutationFields((t) => ({
  createVolume: t.prismaField({
    type: "Volume",
    description: "Creates a volume in an SVM, quota off",
    errors: { types: DOMAIN_ERRORS },
    args: {
      svm: t.arg({ type: SvmSelector, required: true, description: "The SVM to create it in" }),
      name: t.arg.string({ required: true, description: "The volume's name: a letter or _, then letters, digits or _" }),
      size: t.arg({ type: "BigInt", description: "The volume's size, in bytes (at least 20 MB)" }),
    },
    resolve: (_q, _r, args, ctx) => createVolume(ctx, { svm: sel(args.svm), name: args.name, ...(args.size != null ? { size: args.size } : {}) }),
  }),
  setVolumeQuota: t.prismaField({
    type: "Job",
    description: "Turn quota on (enforce the current rules) or off (clear enforcement), as a job",
    errors: { types: DOMAIN_ERRORS },
    args: {
      volumeUuid: t.arg.id({ required: true, description: "The volume's uuid" }),
      enabled: t.arg.boolean({ required: true, description: "true: enforce the volume's quota rules; false: stop enforcing them" }),
      returnTimeout: t.arg.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
    },
    resolve: (_q, _r, args, ctx) => changeVolume(ctx, args, { quotaEnabled: args.enabled }),
  }),
  resizeVolume: t.prismaField({
    type: "Job",
    description: "Sets a volume's size, answered with the job of the change",
    errors: { types: DOMAIN_ERRORS },
    args: {
      volumeUuid: t.arg.id({ required: true, description: "The volume's uuid" }),
      size: t.arg({ type: "BigInt", required: true, description: "The new size, in bytes (at least 20 MB)" }),
      returnTimeout: t.arg.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
    },
    resolve: (_q, _r, args, ctx) => changeVolume(ctx, args, { size: args.size }),
  }),
  deleteVolume: t.boolean({
    description: "Delete a volume with its qtrees and quota rules",
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true, description: "The volume's uuid" }) },
    resolve: async (_r, args, ctx) => {
      await deleteVolume(ctx, String(args.uuid));
      return true;
    },
  }),
}));

type JobArgs = { volumeUuid: string | number; returnTimeout?: number | null };

/** A volume change is answered with its job (REST's PATCH): quota on/off runs in it, a new size is set at once. */
async function changeVolume(ctx: AppContext, args: JobArgs, patch: UpdateVolumeInput) {
  const timeout = returnTimeoutOf(args.returnTimeout);
  return jobWithin(await updateVolume(ctx, String(args.volumeUuid), patch), timeout);
}

export { SvmSelector, VolumeSelector, sel };
