import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { getQuotaReport } from "./operations.js";

builder.queryField("quotaReport", (t) =>
  t.prismaField({
    type: "EnforcedQuota",
    description: "One entry of a volume's quota report (GET /api/storage/quota/reports/{volume}/{index})",
    errors: { types: DOMAIN_ERRORS },
    args: { volumeUuid: t.arg.id({ required: true }), index: t.arg.int({ required: true }) },
    resolve: (_q, _r, args, ctx) => getQuotaReport(ctx, String(args.volumeUuid), args.index),
  }),
);
