import type { AppContext } from "../../platform/context.js";
import { InvalidInputError } from "../../platform/core/errors.js";
import { builder, DOMAIN_ERRORS, usableQuery } from "../../platform/graphql/builder.js";
import { jobResult, jobWithin, RETURN_TIMEOUT_DESCRIPTION, returnTimeoutOf, withJob } from "../jobs/graphql.js";
import { SvmSelector, VolumeSelector, sel } from "../volumes/graphql.js"; // and the Volume type a qtree belongs to
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

builder.prismaObject("Qtree", {
  description: "A directory of a volume that tree quota rules can limit as a whole",
  fields: (t) => ({
    id: t.exposeInt("qtreeId", { description: "The qtree id within its volume" }),
    name: t.exposeString("name", { description: "The qtree's name: its directory at the volume's root" }),
    securityStyle: t.field({ type: SecurityStyle, description: "Which permissions govern its files", resolve: (q) => q.securityStyle.toUpperCase() as "UNIX" }),
    unixPermissions: t.exposeInt("unixPermissions", { description: "The directory's UNIX mode bits (e.g. 493 = 0755)" }),
    volume: t.relation("volume", { description: "The volume the qtree is in" }),
  }),
});

const QTREE_ID = "The qtree's id within its volume (a whole number, as Qtree.id)";
/** A qtree id argument: an ID (every identifier argument is one) holding the qtree's number within its volume. */
function qtreeNumber(id: string): number {
  if (!/^\d{1,9}$/.test(id)) throw new InvalidInputError(`Qtree id "${id}" is not a qtree number`, { target: "id" });
  return Number(id);
}

const qtreeWhere = (volumeUuid: string | number | null | undefined) => (volumeUuid == null ? {} : { volumeUuid: String(volumeUuid) });

builder.queryFields((t) => ({
  qtrees: t.prismaConnection(
    {
      type: "Qtree",
      cursor: "key",
      description: "Qtrees by volume and id, of one volume when volumeUuid is given",
      args: { volumeUuid: t.arg.id({ description: "Only this volume's qtrees" }) },
      resolve: (query, _r, args, ctx) =>
        ctx.db.qtree.findMany({ ...usableQuery(query), where: qtreeWhere(args.volumeUuid), orderBy: [{ volumeUuid: "asc" }, { qtreeId: "asc" }] }),
      totalCount: (_r, args, ctx) => ctx.db.qtree.count({ where: qtreeWhere(args.volumeUuid) }),
    },
    {},
  ),
  qtree: t.prismaField({
    type: "Qtree",
    description: "One qtree of a volume",
    errors: { types: DOMAIN_ERRORS },
    args: { volumeUuid: t.arg.id({ required: true, description: "The volume's uuid" }), id: t.arg.id({ required: true, description: QTREE_ID }) },
    resolve: (_q, _r, args, ctx) => getQtree(ctx, String(args.volumeUuid), qtreeNumber(args.id)),
  }),
}));

type QtreeSettings = { securityStyle?: "UNIX" | "NTFS" | "MIXED" | null; unixPermissions?: number | null };
const qtreeSettings = (args: QtreeSettings) => ({
  ...(args.securityStyle ? { securityStyle: args.securityStyle.toLowerCase() as SecurityStyleValue } : {}),
  ...(args.unixPermissions != null ? { unixPermissions: args.unixPermissions } : {}),
});

builder.mutationFields((t) => ({
  createQtree: t.prismaField({
    type: "Qtree",
    description: "Creates a qtree (a directory at the volume's root)",
    errors: { types: DOMAIN_ERRORS },
    args: {
      svm: t.arg({ type: SvmSelector, required: true, description: "The volume's SVM" }),
      volume: t.arg({ type: VolumeSelector, required: true, description: "The volume to create it in" }),
      name: t.arg.string({ required: true, description: "The qtree's name (a taken one is refused)" }),
      securityStyle: t.arg({ type: SecurityStyle, description: "Which permissions govern its files (the volume's by default)" }),
      unixPermissions: t.arg.int({ description: "The directory's UNIX mode bits (e.g. 493 = 0755)" }),
    },
    resolve: (_q, _r, args, ctx) => createQtree(ctx, { svm: sel(args.svm), volume: sel(args.volume), name: args.name, ...qtreeSettings(args) }),
  }),
  renameQtree: t.prismaField({
    type: "Qtree",
    description: "Rename a qtree; the quota rules scoped to it follow. The rename runs in the job: `data` has the new name once it ended",
    errors: { types: DOMAIN_ERRORS, result: jobResult },
    args: {
      volumeUuid: t.arg.id({ required: true, description: "The volume's uuid" }),
      id: t.arg.id({ required: true, description: QTREE_ID }),
      name: t.arg.string({ required: true, description: "The new name" }),
      returnTimeout: t.arg.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
    },
    resolve: (_q, _r, args, ctx) => changeQtree(ctx, args, { name: args.name }),
  }),
  updateQtree: t.prismaField({
    type: "Qtree",
    description: "Change a qtree's security style or UNIX permissions. The change runs in the job: `data` shows it once it ended",
    errors: { types: DOMAIN_ERRORS, result: jobResult },
    args: {
      volumeUuid: t.arg.id({ required: true, description: "The volume's uuid" }),
      id: t.arg.id({ required: true, description: QTREE_ID }),
      securityStyle: t.arg({ type: SecurityStyle, description: "Which permissions govern its files" }),
      unixPermissions: t.arg.int({ description: "The directory's UNIX mode bits (e.g. 493 = 0755)" }),
      returnTimeout: t.arg.int({ description: RETURN_TIMEOUT_DESCRIPTION }),
    },
    resolve: (_q, _r, args, ctx) => changeQtree(ctx, args, qtreeSettings(args)),
  }),
  deleteQtree: t.boolean({
    description: "Delete a qtree and the quota rules scoped to it",
    errors: { types: DOMAIN_ERRORS },
    args: { volumeUuid: t.arg.id({ required: true, description: "The volume's uuid" }), id: t.arg.id({ required: true, description: QTREE_ID }) },
    resolve: async (_r, args, ctx) => {
      await (await deleteQtree(ctx, String(args.volumeUuid), qtreeNumber(args.id))).succeeded();
      return true;
    },
  }),
}));

/** A qtree change runs as a job (REST's PATCH): the qtree as it is after the wait, with the job. */
async function changeQtree(ctx: AppContext, args: { volumeUuid: string | number; id: string; returnTimeout?: number | null }, patch: UpdateQtreeInput) {
  const timeout = returnTimeoutOf(args.returnTimeout);
  const job = await jobWithin(await updateQtree(ctx, String(args.volumeUuid), qtreeNumber(args.id), patch), timeout);
  return withJob(await getQtree(ctx, String(args.volumeUuid), qtreeNumber(args.id)), job);
}
