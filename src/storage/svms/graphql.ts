import { builder, DOMAIN_ERRORS, usableQuery } from "../../platform/graphql/builder.js";
import { createSvm, deleteSvm, getSvm } from "./operations.js";

builder.prismaObject("Svm", {
  description: "A storage virtual machine (SVM): a tenant of the storage system that owns volumes",
  fields: (t) => ({
    uuid: t.exposeID("uuid", { description: "The SVM's uuid" }),
    name: t.exposeString("name", { description: "The SVM's name, unique on the cluster" }),
    volumes: t.relatedConnection("volumes", { cursor: "uuid", description: "The SVM's volumes by name", query: { orderBy: [{ name: "asc" }, { uuid: "asc" }] }, totalCount: true }),
  }),
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
    description: "One SVM",
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true, description: "The SVM's uuid" }) },
    resolve: (_q, _r, args, ctx) => getSvm(ctx, String(args.uuid)),
  }),
}));

builder.mutationFields((t) => ({
  createSvm: t.prismaField({
    type: "Svm",
    description: "Creates an SVM, with no volumes",
    errors: { types: DOMAIN_ERRORS },
    args: { name: t.arg.string({ required: true, description: "The SVM's name (a taken one is refused)" }) },
    resolve: (_q, _r, args, ctx) => createSvm(ctx, { name: args.name }),
  }),
  deleteSvm: t.boolean({
    description: "Deletes an SVM that has no volumes left; true once gone",
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true, description: "The SVM's uuid" }) },
    resolve: async (_r, args, ctx) => {
      await deleteSvm(ctx, String(args.uuid));
      return true;
    },
  }),
}));
