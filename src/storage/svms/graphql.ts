import type { Svm } from "../../generated/prisma-sqlite/client.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder, usableQuery } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { DELETED_IDS } from "../core/graphql.js";
import { createSvm, deleteSvm, getSvm } from "./operations.js";

export const SvmRef = builder.prismaNode("Svm", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A storage virtual machine (SVM): a tenant of the storage system that owns volumes",
  id: { field: "uuid", description: "The SVM's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    uuid: t.exposeID("uuid", { description: "The SVM's ONTAP uuid: the `svm.uuid` of the ONTAP REST API" }),
    name: t.exposeString("name", { description: "The SVM's name, unique on the cluster" }),
    volumes: t.relatedConnection("volumes", { cursor: "uuid", description: "The SVM's volumes by name", query: { orderBy: [{ name: "asc" }, { uuid: "asc" }] }, totalCount: true }),
  }),
});

export const SvmSelector = builder.inputType("SvmSelector", {
  description: "An SVM by name or id (both given: they must name the same SVM)",
  fields: (t) => ({ name: t.string({ description: "The SVM's name" }), id: t.id({ description: "The SVM's id (its global id, or its uuid)" }) }),
});

/** An SvmSelector as the operations take it (name and/or uuid). */
export const svmSelection = (s: typeof SvmSelector.$inferInput | null | undefined) => ({
  ...(s?.name != null ? { name: s.name } : {}),
  ...(s?.id != null ? { uuid: domainId(s.id, "Svm", "svm.id") } : {}),
});

builder.queryFields((t) => ({
  svms: t.prismaConnection(
    {
      type: "Svm",
      cursor: "uuid",
      description: "The SVMs by name",
      resolve: (query, _r, _a, ctx) => ctx.db.svm.findMany({ ...usableQuery(query), orderBy: [{ name: "asc" }, { uuid: "asc" }] }),
      totalCount: (_r, _a, ctx) => ctx.db.svm.count(),
    },
    {},
  ),
  svm: t.prismaField({
    type: "Svm",
    nullable: true,
    description: lookupDescription("One SVM"),
    args: { id: t.arg.id({ required: true, description: "The SVM's id (its global id, or its uuid)" }) },
    resolve: (_q, _r, args, ctx) => orNull(() => getSvm(ctx, domainId(args.id, "Svm", "id"))),
  }),
}));

const CreateSvmInput = builder.inputType("CreateSvmInput", {
  description: "A new SVM",
  fields: (t) => ({ name: t.string({ required: true, description: "The SVM's name: a letter or _, then letters, digits, _, . or - (a taken one is refused: ALREADY_EXISTS)" }) }),
});
const DeleteSvmInput = builder.inputType("DeleteSvmInput", {
  description: "The SVM to delete",
  fields: (t) => ({ id: t.id({ required: true, description: "The SVM's id (its global id, or its uuid)" }) }),
});

builder.mutationFields((t) => ({
  createSvm: t.field({
    type: payloadType<{ svm: Svm }>("createSvm", "What `createSvm` made: the SVM", (t) => ({
      svm: t.field({ type: SvmRef, description: "The new SVM, with no volumes", resolve: (p) => p.svm }),
    })),
    description: "Creates an SVM, with no volumes",
    errors: mutationErrors("createSvm", [InvalidInputError, ConflictError]),
    args: { input: t.arg({ type: CreateSvmInput, required: true, description: "The new SVM" }) },
    resolve: async (_r, { input }, ctx) => ({ svm: await createSvm(ctx, { name: input.name }) }),
  }),
  deleteSvm: t.field({
    type: payloadType<{ deletedIds: string[] }>("deleteSvm", "What `deleteSvm` removed: the SVM", (t) => ({
      deletedIds: t.idList({ description: DELETED_IDS, resolve: (p) => p.deletedIds }),
    })),
    description: "Deletes an SVM that has no volumes left (ConflictError while it has some)",
    errors: mutationErrors("deleteSvm", [InvalidInputError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: DeleteSvmInput, required: true, description: "The SVM" }) },
    resolve: async (_r, { input }, ctx) => {
      const uuid = domainId(input.id, "Svm", "id");
      await deleteSvm(ctx, uuid);
      return { deletedIds: [globalId("Svm", uuid)] };
    },
  }),
}));
