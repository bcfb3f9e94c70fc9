import type { Request, Response } from "express";
import { sendOntapError } from "./errors.js";

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

/** Wraps an async route handler so domain errors become the ONTAP envelope. */
export const handle =
  (fn: (req: Request, res: Response) => Promise<void>) =>
  (req: Request, res: Response): void => {
    fn(req, res).catch((err) => sendOntapError(req, res, err));
  };
