import { builder } from "../../platform/graphql/builder.js";
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

export const JobRef = builder.prismaObject("Job", {
  description: "An asynchronous storage operation (ONTAP job)",
  fields: (t) => ({
    uuid: t.exposeID("uuid", { description: "The job's uuid" }),
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
    description: "A job, while it is retained (300 s after it ends)",
    args: { uuid: t.arg.id({ required: true, description: "The job's uuid" }) },
    resolve: async (_q, _root, args, ctx): Promise<Job | null> => getJob(ctx, String(args.uuid)).catch(() => null),
  }),
);

// ---- REST's synchronous/asynchronous choice (return_timeout) for the mutations whose change runs as a job

export const RETURN_TIMEOUT_DESCRIPTION =
  "Seconds (0–120) to wait for the change's job; omitted: until it ends. A job still " +
  "running then is returned as it stands (poll it with `job(uuid:)`); one that failed is this mutation's error.";

/** Checked before the change starts: a bad value must not leave a change made and unanswered. */
export const returnTimeoutOf = (seconds: number | null | undefined) => (seconds == null ? undefined : checkTimeout(seconds, "returnTimeout"));

/**
 * The job after the wait (omitted: when it ends, as these mutations always answered). A job that failed within the
 * wait fails the mutation with its typed error, as REST answers it with its error envelope.
 */
export async function jobWithin(started: StartedJob, seconds: number | undefined): Promise<Job> {
  const job = seconds === undefined ? await started.done : await awaitJob(started, seconds);
  return job.state === "failure" ? started.succeeded() : job;
}

const JOB = Symbol("job");

/** Carries a change's job on the object a mutation returns, for the success type's `job` field (`jobResult`). */
export const withJob = <T extends object>(data: T, job: Job): T => Object.assign(data, { [JOB]: job });

/** The errors plugin's `result` option of a mutation whose data is the changed object: its success type gets `job`. */
export const jobResult = {
  fields: (t: PothosSchemaTypes.ObjectFieldBuilder<typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never, object>) => ({
    job: t.field({
      type: JobRef,
      description: "The job of the change: still QUEUED or RUNNING when returnTimeout ran out first",
      resolve: (data) => (data as { [JOB]: Job })[JOB],
    }),
  }),
};
