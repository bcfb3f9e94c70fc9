import { builder } from "../../platform/graphql/builder.js";
import { orNull } from "../../platform/graphql/lookup.js";
import { volumeUuidOf } from "../volumes/graphql.js";
import { getQuotaReport } from "./operations.js";

builder.queryField("quotaReport", (t) =>
  t.prismaField({
    type: "EnforcedQuota",
    nullable: true,
    description: "One entry of a volume's quota report: a limit being enforced and the space and files used against it (null when the volume or its entry does not exist)",
    args: {
      volumeId: t.arg.id({ required: true, description: "The volume (its global id, or its uuid)" }),
      index: t.arg.int({ required: true, description: "The entry's index in the volume's report (QuotaReport.index)" }),
    },
    resolve: (_q, _r, args, ctx) => orNull(() => getQuotaReport(ctx, volumeUuidOf(args.volumeId, "volumeId"), args.index)),
  }),
);
