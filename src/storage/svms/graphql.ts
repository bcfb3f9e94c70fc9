import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { createSvm, deleteSvm, getSvm } from "./operations.js";

builder.prismaObject("Svm", {
  description: "A storage virtual machine",
  fields: (t) => ({
    uuid: t.exposeID("uuid"),
    name: t.exposeString("name"),
    volumes: t.relation("volumes", { query: { orderBy: { name: "asc" } } }),
  }),
});

builder.queryFields((t) => ({
  svms: t.prismaField({ type: ["Svm"], resolve: (query, _r, _a, ctx) => ctx.db.svm.findMany({ ...query, orderBy: { name: "asc" } }) }),
  svm: t.prismaField({
    type: "Svm",
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true }) },
    resolve: (_q, _r, args, ctx) => getSvm(ctx, String(args.uuid)),
  }),
}));

builder.mutationFields((t) => ({
  createSvm: t.prismaField({
    type: "Svm",
    errors: { types: DOMAIN_ERRORS },
    args: { name: t.arg.string({ required: true }) },
    resolve: (_q, _r, args, ctx) => createSvm(ctx, { name: args.name }),
  }),
  deleteSvm: t.boolean({
    errors: { types: DOMAIN_ERRORS },
    args: { uuid: t.arg.id({ required: true }) },
    resolve: async (_r, args, ctx) => {
      await deleteSvm(ctx, String(args.uuid));
      return true;
    },
  }),
}));
