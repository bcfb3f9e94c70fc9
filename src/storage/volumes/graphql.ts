import type { AppContext } from "../../platform/context.js";
import { builder, DOMAIN_ERRORS, usableQuery } from "../../platform/graphql/builder.js";
import { jobWithin, RETURN_TIMEOUT_DESCRIPTION, returnTimeoutOf } from "../jobs/graphql.js";
import { createVolume, deleteVolume, getVolume, updateVolume } from "./operations.js";
import type { UpdateVolumeInput } from "./schema.js";

export const QuotaState = builder.enumType("QuotaState", {
  description: "ONTAP's quota states of a volume",
  values: ["OFF", "INITIALIZING", "ON", "RESIZING", "MIXED", "CORRUPT"] as const,
});

builder.prismaObject("Volume", {
  fields: (t) => ({
    uuid: t.exposeID("uuid"),
    name: t.exposeString("name"),
    svm: t.relation("svm"),
    size: t.expose("sizeBytes", { type: "BigInt", nullable: true }),
    quotaEnabled: t.exposeBoolean("quotaEnabled"),
    quotaState: t.field({ type: QuotaState, resolve: (v) => v.quotaState.toUpperCase() as "OFF" }),
    qtrees: t.relatedConnection("qtrees", { cursor: "key", description: "The volume's qtrees by id", query: { orderBy: { qtreeId: "asc" } }, totalCount: true }),
  }),
});

const SvmSelector = builder.inputType("SvmSelector", {
  description: "An SVM by name or uuid",
  fields: (t) => ({ name: t.string(), uuid: t.id() }),
});
const VolumeSelector = builder.inputType("VolumeSelector", {
  description: "A volume by name (within the SVM) or uuid",
  fields: (t) => ({ name: t.string(), uuid: t.id() }),
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
      args: { svm: t.arg({ type: SvmSelector }) },
      resolve: (query, _r, args, ctx) => ctx.db.volume.findMany({ ...usableQuery(query), where: volumeWhere(args.svm), orderBy: [{ name: "asc" }, { uuid: "asc" }] }),
      totalCount: (_r, args, ctx) => ctx.db.volume.count({ where: volumeWhere(args.svm) }),
    },
    {},
  ),
  volume: t.prismaField({
    type: "Volume",
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true }) },
    resolve: (_q, _r, args, ctx) => getVolume(ctx, String(args.uuid)),
  }),
}));

builder.mutationFields((t) => ({
  createVolume: t.prismaField({
    type: "Volume",
    errors: { types: DOMAIN_ERRORS },
    args: { svm: t.arg({ type: SvmSelector, required: true }), name: t.arg.string({ required: true }), size: t.arg({ type: "BigInt" }) },
    resolve: (_q, _r, args, ctx) => createVolume(ctx, { svm: sel(args.svm), name: args.name, ...(args.size != null ? { size: args.size } : {}) }),
  }),
  setVolumeQuota: t.prismaField({
    type: "Job",
    description: "Turn quota on (enforce the current rules) or off (clear enforcement), as a job",
    errors: { types: DOMAIN_ERRORS },
    args: {
      volumeUuid: t.arg.id({ required: true }),
      enabled: t.arg.boolean({ required: true }),
      returnTimeout: t.arg.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
    },
    resolve: (_q, _r, args, ctx) => changeVolume(ctx, args, { quotaEnabled: args.enabled }),
  }),
  resizeVolume: t.prismaField({
    type: "Job",
    description: "Set a volume's size (bytes, at least 20 MB), answered with its job as REST's PATCH",
    errors: { types: DOMAIN_ERRORS },
    args: {
      volumeUuid: t.arg.id({ required: true }),
      size: t.arg({ type: "BigInt", required: true }),
      returnTimeout: t.arg.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
    },
    resolve: (_q, _r, args, ctx) => changeVolume(ctx, args, { size: args.size }),
  }),
  deleteVolume: t.boolean({
    description: "Delete a volume with its qtrees and quota rules",
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true }) },
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
