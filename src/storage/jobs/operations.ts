import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import { DomainError, NotFoundError } from "../../platform/errors.js";
import type { Job } from "../../generated/prisma-sqlite/client.js";
import { CODES } from "../ontap/codes.js";

/** ONTAP deletes a job 300 s after it reaches a terminal state. */
export const JOB_RETENTION_MS = 300_000;

export interface StartedJob {
  job: Job;
  /** Resolves with the job in its terminal state (never rejects). */
  done: Promise<Job>;
}

/**
 * Runs `work` as an ONTAP job: queued → running → success | failure, with timestamps. Domain errors thrown
 * by the work become the job's failure (message, code, error); anything else is an internal failure.
 */
export async function startJob(
  ctx: AppContext,
  description: string,
  svmUuid: string | null,
  work: () => Promise<void>,
): Promise<StartedJob> {
  const job = await ctx.db.job.create({ data: { uuid: randomUUID(), description, state: "queued", svmUuid } });
  const done = (async () => {
    await ctx.db.job.update({ where: { uuid: job.uuid }, data: { state: "running", startTime: new Date() } });
    try {
      await work();
      return await ctx.db.job.update({
        where: { uuid: job.uuid },
        data: { state: "success", message: "success", code: 0, endTime: new Date() },
      });
    } catch (e) {
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
  return { job, done };
}

/**
 * Deletes jobs past their retention, every minute (never on a request's path). getJob already answers 404 for
 * them, so the sweep only reclaims space. Returns the stop function.
 */
export function scheduleJobSweep(ctx: AppContext): () => void {
  const sweep = () =>
    void ctx.db.job.deleteMany({ where: { endTime: { lt: new Date(Date.now() - JOB_RETENTION_MS) } } }).catch((e) => {
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
