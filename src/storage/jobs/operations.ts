import { randomUUID } from "node:crypto";
import os from "node:os";
import type { AppContext } from "../../platform/context.js";
import { DomainError, NotFoundError } from "../../platform/core/errors.js";
import type { Job } from "../../generated/prisma-sqlite/client.js";
import { CODES } from "../core/codes.js";

/** ONTAP deletes a job 300 s after it reaches a terminal state. */
export const JOB_RETENTION_MS = 300_000;

/** A job runs for milliseconds; one unfinished after this long was abandoned by an instance that died for good. */
export const JOB_ABANDONED_MS = 600_000;

const NOT_FINISHED = { in: ["queued", "running"] };

/** The instance that runs a job: the host and the data directory, stable across restarts of one instance. */
export const jobOwner = (ctx: AppContext) => `${os.hostname()}:${ctx.config.dataDir}`;

export interface StartedJob {
  job: Job;
  /** Resolves with the job in its terminal state (never rejects). */
  done: Promise<Job>;
  /** Resolves with the job when it succeeded; rejects with the domain error that failed it (typed GraphQL results). */
  succeeded(): Promise<Job>;
}

/** What a job does, in domain terms; faces render it (ONTAP shows its request line, see jobs/serialize.ts). */
export interface JobSubject {
  action: "create" | "update" | "delete";
  resource: JobResource;
  /** The object's key (uuid, or volume uuid/qtree id). */
  key?: string;
}
export const JOB_RESOURCES = ["svm", "volume", "qtree", "quota rule"] as const;
export type JobResource = (typeof JOB_RESOURCES)[number];

/** The stored description: "update quota rule <uuid>". */
export const describeJob = (s: JobSubject) => [s.action, s.resource, s.key].filter(Boolean).join(" ");

/**
 * Runs `work` as an ONTAP job: queued → running → success | failure, with timestamps. Domain errors thrown
 * by the work become the job's failure (message, code, error); anything else is an internal failure.
 */
export async function startJob(
  ctx: AppContext,
  subject: JobSubject,
  svmUuid: string | null,
  work: () => Promise<void>,
): Promise<StartedJob> {
  const job = await ctx.db.job.create({ data: { uuid: randomUUID(), description: describeJob(subject), state: "queued", svmUuid, owner: jobOwner(ctx) } });
  let failure: unknown;
  const done = (async () => {
    await ctx.db.job.update({ where: { uuid: job.uuid }, data: { state: "running", startTime: new Date() } });
    try {
      await work();
      return await ctx.db.job.update({
        where: { uuid: job.uuid },
        data: { state: "success", message: "success", code: 0, endTime: new Date() },
      });
    } catch (e) {
      failure = e;
      const err = e instanceof DomainError ? e : undefined;
      if (!err) ctx.log.error("job failed", { job: job.uuid, error: e instanceof Error ? e.stack : String(e) });
      const message = err?.message ?? "Internal error";
      const code = err?.detail.code ?? "1";
      return ctx.db.job.update({
        where: { uuid: job.uuid },
        data: {
          state: "failure",
          message,
          code: Number(code),
          errorJson: JSON.stringify({ message, code, ...(err?.detail.target ? { target: err.detail.target } : {}) }),
          endTime: new Date(),
        },
      });
    }
  })();
  const succeeded = async () => {
    const finished = await done;
    if (finished.state === "failure" && failure instanceof DomainError) throw failure;
    return finished;
  };
  return { job, done, succeeded };
}

const INTERRUPTED = {
  message: "Job interrupted: the server stopped before the job finished. Changes committed before the interruption are kept and quota enforcement is brought up to date on restart; check the object's state and retry if needed.",
  code: Number(CODES.jobInterrupted),
};

/** Fails unfinished jobs with the interruption message (ONTAP clients poll jobs until a terminal state). */
async function failInterrupted(ctx: AppContext, where: object): Promise<number> {
  const now = new Date();
  const { count } = await ctx.db.job.updateMany({
    where: { ...where, state: NOT_FINISHED },
    data: { state: "failure", ...INTERRUPTED, errorJson: JSON.stringify({ message: INTERRUPTED.message, code: CODES.jobInterrupted }), endTime: now },
  });
  return count;
}

/**
 * Start-up: the jobs a previous run of this instance left queued or running will never finish. Alone on its
 * database, every unfinished job is such a job; when instances share the database (REDIS_URL), only this
 * instance's own jobs (and unowned ones from before owners were recorded) — another instance's jobs may be running.
 */
export function recoverJobs(ctx: AppContext): Promise<number> {
  return failInterrupted(ctx, ctx.config.redisUrl ? { OR: [{ owner: jobOwner(ctx) }, { owner: null }] } : {});
}

/**
 * Every minute (never on a request's path): deletes jobs past their retention (getJob already answers 404 for
 * them, so this only reclaims space) and fails jobs abandoned by an instance that never came back. Returns the
 * stop function.
 */
export function scheduleJobSweep(ctx: AppContext): () => void {
  const sweep = () =>
    void Promise.all([
      ctx.db.job.deleteMany({ where: { endTime: { lt: new Date(Date.now() - JOB_RETENTION_MS) } } }),
      failInterrupted(ctx, { createdAt: { lt: new Date(Date.now() - JOB_ABANDONED_MS) } }),
    ]).catch((e) => {
      ctx.log.warn("job sweep failed", { error: String(e) });
    });
  const timer = setInterval(sweep, 60_000);
  timer.unref();
  return () => clearInterval(timer);
}

export async function getJob(ctx: AppContext, uuid: string): Promise<Job> {
  const job = await ctx.db.job.findUnique({ where: { uuid } });
  if (!job || (job.endTime && job.endTime.getTime() < Date.now() - JOB_RETENTION_MS)) {
    throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "uuid" });
  }
  return job;
}

/** Waits for the job up to `seconds`; returns the job as it stands then. */
export async function awaitJob(started: StartedJob, seconds: number): Promise<Job> {
  if (seconds <= 0) return started.job;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), seconds * 1000)));
  const finished = await Promise.race([started.done, timeout]);
  clearTimeout(timer);
  return finished ?? started.job;
}
