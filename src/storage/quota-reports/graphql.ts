import { builder } from "../../platform/graphql/builder.js";
import { LOOKUP_ERRORS } from "../core/graphql.js";
import { volumeUuidOf } from "../volumes/graphql.js";
import { getQuotaReport } from "./operations.js";

builder.queryField("quotaReport", (t) =>
  t.prismaField({
    type: "EnforcedQuota",
    description: "One entry of a volume's quota report: a limit being enforced and the space and files used against it",
    errors: LOOKUP_ERRORS,
    args: {
      volumeId: t.arg.id({ required: true, description: "The volume (its global id, or its uuid)" }),
      index: t.arg.int({ required: true, description: "The entry's index in the volume's report (QuotaReport.index)" }),
    },
    resolve: (_q, _r, args, ctx) => getQuotaReport(ctx, volumeUuidOf(args.volumeId, "volumeId"), args.index),
  }),
);
