import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { getQtree } from "./operations.js";

builder.queryFields((t) => ({
  qtrees: t.prismaField({
    type: ["Qtree"],
    description: "Qtrees by volume and id, of one volume when volumeUuid is given",
    args: { volumeUuid: t.arg.id() },
    resolve: (query, _r, args, ctx) =>
      ctx.db.qtree.findMany({
        ...query,
        where: args.volumeUuid == null ? {} : { volumeUuid: String(args.volumeUuid) },
        orderBy: [{ volumeUuid: "asc" }, { qtreeId: "asc" }],
      }),
  }),
  qtree: t.prismaField({
    type: "Qtree",
    errors: { types: DOMAIN_ERRORS },
    args: { volumeUuid: t.arg.id({ required: true }), id: t.arg.int({ required: true }) },
    resolve: (_q, _r, args, ctx) => getQtree(ctx, String(args.volumeUuid), args.id),
  }),
}));
