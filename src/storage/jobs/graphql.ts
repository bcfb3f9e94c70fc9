import { builder } from "../../platform/graphql/builder.js";
import type { Job } from "../../generated/prisma-sqlite/client.js";
import { getJob } from "./operations.js";

export const JobState = builder.enumType("JobState", { values: ["QUEUED", "RUNNING", "PAUSED", "SUCCESS", "FAILURE"] as const });

export const JobRef = builder.prismaObject("Job", {
  description: "An asynchronous storage operation (ONTAP job)",
  fields: (t) => ({
    uuid: t.exposeID("uuid"),
    description: t.exposeString("description"),
    state: t.field({ type: JobState, resolve: (j) => j.state.toUpperCase() as "SUCCESS" }),
    message: t.exposeString("message"),
    code: t.exposeInt("code"),
    startTime: t.expose("startTime", { type: "DateTime", nullable: true }),
    endTime: t.expose("endTime", { type: "DateTime", nullable: true }),
  }),
});

builder.queryField("job", (t) =>
  t.prismaField({
    type: "Job",
    nullable: true,
    description: "A job, while it is retained (300 s after it ends)",
    args: { uuid: t.arg.id({ required: true }) },
    resolve: async (_q, _root, args, ctx): Promise<Job | null> => getJob(ctx, String(args.uuid)).catch(() => null),
  }),
);
