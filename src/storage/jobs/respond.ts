import type { Request, Response, Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { ontapErrorBody } from "../ontap/errors.js";
import { parseWriteQuery } from "../ontap/query.js";
import { handle, sendHal } from "../ontap/respond.js";
import type { WireForm } from "../ontap/wire.js";
import { awaitJob, startJob, type JobSubject, type StartedJob } from "./operations.js";
import { jobLink } from "./serialize.js";

/*
 * How ONTAP answers a write: with its job — waited for up to return_timeout, or already finished for a write that
 * ran at once — and the POST route of a synchronous create. Written with the ontap/ kit, which knows nothing of jobs.
 */

/**
 * The answer to a write: wait up to return_timeout seconds for the job. Finished → `okStatus` (201 with
 * Location for creates); still running (or return_timeout=0) → 202. Either way the body names the job, and
 * with return_records the records. A job that failed within the wait answers with the error envelope.
 */
export async function respondWrite(
  req: Request,
  res: Response,
  started: StartedJob,
  opts: { returnTimeout: number; okStatus: number; records?: object[]; location?: string },
): Promise<void> {
  const job = await awaitJob(started, opts.returnTimeout);
  if (opts.location) res.set("Location", opts.location);
  if (job.state === "failure") {
    const err = JSON.parse(job.errorJson ?? "{}");
    const body = { ...ontapErrorBody(err.message ?? job.message, String(err.code ?? job.code), err.target), job: jobLink(job) };
    return sendHal(req, res, 409, body);
  }
  const finished = job.state === "success";
  sendHal(req, res, finished ? opts.okStatus : 202, {
    ...(opts.records ? { num_records: opts.records.length, records: opts.records } : {}),
    job: jobLink(job),
  });
}

/** A write whose work finished synchronously still answers with a (finished) job, as ONTAP clients poll one. */
export async function respondSync(
  ctx: AppContext,
  req: Request,
  res: Response,
  opts: { subject: JobSubject; svmUuid: string | null; returnTimeout: number; okStatus: number; records?: object[]; location?: string },
): Promise<void> {
  const job = await startJob(ctx, opts.subject, opts.svmUuid, async () => {});
  await respondWrite(req, res, job, opts);
}

/** How a resource is created: its wire form, the operation, and what the answer says of the new object. */
export interface CreateSpec<Obj> {
  body: WireForm;
  create: (input: never) => Promise<Obj>;
  subject: (obj: Obj) => JobSubject;
  svmUuid: (obj: Obj) => string;
  href: (obj: Obj) => string;
  record: (obj: Obj) => object;
}

/** POST of a synchronous create, answered as ONTAP does: a finished job (or 201 when the client waits), Location. */
export function mountCreate<Obj>(router: Router, ctx: AppContext, path: string, spec: CreateSpec<Obj>): void {
  router.post(
    path,
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, true);
      const obj = await spec.body.run(() => spec.create(spec.body.toDomain(req.body) as never));
      await respondSync(ctx, req, res, {
        subject: spec.subject(obj),
        svmUuid: spec.svmUuid(obj),
        returnTimeout: wq.returnTimeout,
        okStatus: 201,
        location: spec.href(obj),
        records: wq.returnRecords ? [spec.record(obj)] : undefined,
      });
    }),
  );
}
