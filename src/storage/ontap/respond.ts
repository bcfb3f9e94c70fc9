import type { Request, Response } from "express";
import type { AppContext } from "../../platform/context.js";
import { awaitJob, startJob, type JobSubject, type StartedJob } from "../jobs/operations.js";
import { jobLink } from "../jobs/serialize.js";
import { sendOntapError } from "./errors.js";
import { ontapErrorBody } from "./errors.js";

/** HAL JSON; a client that asks for plain application/json gets no `_links` except paging's `next`. */
export function sendHal(req: Request, res: Response, status: number, body: unknown): void {
  sendHalBytes(req, res, status, halBytes(req, body));
}

const wantsPlainJson = (req: Request) => /^application\/json\s*(;|$)/.test(req.get("accept") ?? "");

/** The body as sent to this request (HAL or plain JSON, by its Accept header); `halVariant` names the choice. */
export const halBytes = (req: Request, body: unknown) => Buffer.from(JSON.stringify(wantsPlainJson(req) ? stripLinks(body, true) : body));
export const halVariant = (req: Request) => (wantsPlainJson(req) ? "json" : "hal");

export function sendHalBytes(req: Request, res: Response, status: number, bytes: Buffer): void {
  res
    .status(status)
    .type(wantsPlainJson(req) ? "application/json" : "application/hal+json")
    .send(bytes);
}

function stripLinks(v: unknown, top: boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => stripLinks(x, false));
  if (!v || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === "_links") {
      const next = (x as { next?: unknown }).next;
      if (top && next) out._links = { next };
      continue;
    }
    out[k] = stripLinks(x, false);
  }
  return out;
}

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

/** Wraps an async route handler so domain errors become the ONTAP envelope. */
export const handle =
  (fn: (req: Request, res: Response) => Promise<void>) =>
  (req: Request, res: Response): void => {
    fn(req, res).catch((err) => sendOntapError(req, res, err));
  };

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
