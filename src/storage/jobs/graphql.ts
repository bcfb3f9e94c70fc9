import { builder } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId } from "../../platform/graphql/global-id.js";
import type { Job } from "../../generated/prisma-sqlite/client.js";
import { checkTimeout } from "../ontap/query.js";
import { awaitJob, getJob, type StartedJob } from "./operations.js";

export const JobState = builder.enumType("JobState", {
  description: "Where a storage job stands",
  values: {
    QUEUED: { description: "Waiting to run" },
    RUNNING: { description: "Running" },
    PAUSED: { description: "Paused; it resumes later" },
    SUCCESS: { description: "Ended: the change is made" },
    FAILURE: { description: "Ended: the change failed (`message` and `code` say why)" },
  } as const,
});

export const JobRef = builder.prismaNode("Job", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "An asynchronous storage operation (ONTAP job)",
  id: { field: "uuid", description: "The job's global id: use it for `node(id:)` (to poll it), as a cache key and in arguments" },
  fields: (t) => ({
    uuid: t.exposeID("uuid", { description: "The job's ONTAP uuid: the `job.uuid` of the ONTAP REST API" }),
    description: t.exposeString("description", { description: "What the job does (the change it makes)" }),
    state: t.field({ type: JobState, description: "Where the job stands", resolve: (j) => j.state.toUpperCase() as "SUCCESS" }),
    message: t.exposeString("message", { description: "The job's last message: its progress, or why it failed" }),
    code: t.exposeInt("code", { description: "0 on success, else the ONTAP error number of the failure" }),
    startTime: t.expose("startTime", { type: "DateTime", nullable: true, description: "When the job started running (null while queued)" }),
    endTime: t.expose("endTime", { type: "DateTime", nullable: true, description: "When the job ended (null until then)" }),
  }),
});

builder.queryField("job", (t) =>
  t.prismaField({
    type: "Job",
    nullable: true,
    description: lookupDescription("A job, while it is retained (300 s after it ends)"),
    args: { id: t.arg.id({ required: true, description: "The job's id (its global id, or its uuid)" }) },
    resolve: (_q, _root, args, ctx): Promise<Job | null> => orNull(() => getJob(ctx, domainId(args.id, "Job", "id"))),
  }),
);

// ---- REST's synchronous/asynchronous choice (return_timeout) for the mutations whose change runs as a job

export const RETURN_TIMEOUT_DESCRIPTION =
  "Seconds (0–120) to wait for the change's job; omitted: until it ends. A job still " +
  "running then is returned as it stands (poll it with `node(id:)`); one that failed is this mutation's error.";

/** Checked before the change starts: a bad value must not leave a change made and unanswered. */
export const returnTimeoutOf = (seconds: number | null | undefined) => (seconds == null ? undefined : checkTimeout(seconds, "returnTimeoutSeconds"));

/**
 * The job after the wait (omitted: when it ends, as these mutations always answered). A job that failed within the
 * wait fails the mutation with its typed error, as REST answers it with its error envelope.
 */
export async function jobWithin(started: StartedJob, seconds: number | undefined): Promise<Job> {
  const job = seconds === undefined ? await started.done : await awaitJob(started, seconds);
  return job.state === "failure" ? started.succeeded() : job;
}

/** The `job` field of a mutation payload whose change runs as a job. */
export const JOB_DESCRIPTION = "The job of the change: still QUEUED or RUNNING when returnTimeoutSeconds ran out first (poll it with `node(id:)`)";
