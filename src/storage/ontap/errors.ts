import type { NextFunction, Request, Response } from "express";
import { DomainError } from "../../platform/core/errors.js";
import { httpClientError } from "../../platform/http/client-errors.js";
import { logUnexpected } from "../../platform/http/request-id.js";
import { CODES } from "../core/codes.js";

/** The ONTAP error envelope: {"error": {"message", "code", "target"?}} as application/hal+json. */
export function ontapErrorBody(message: string, code: string, target?: string) {
  return { error: { message, code, ...(target ? { target } : {}) } };
}

const defaultCode = (status: number) =>
  status === 404 ? CODES.notFound : status === 409 ? CODES.duplicateName : CODES.invalidValue;

export function sendOntapError(req: Request, res: Response, err: unknown): void {
  if (err instanceof DomainError) {
    res
      .status(err.status)
      .type("application/hal+json")
      .send(JSON.stringify(ontapErrorBody(err.message, err.detail.code ?? defaultCode(err.status), err.detail.target)));
    return;
  }
  const e = err as { type?: string };
  if (e?.type === "entity.too.large") {
    res.status(413).type("application/hal+json").send(JSON.stringify(ontapErrorBody("Request body too large", CODES.invalidValue)));
    return;
  }
  if (e?.type === "entity.parse.failed") {
    res.status(400).type("application/hal+json").send(JSON.stringify(ontapErrorBody("Invalid JSON input", CODES.invalidValue)));
    return;
  }
  const client = httpClientError(err);
  if (client) {
    res.status(client.status).type("application/hal+json").send(JSON.stringify(ontapErrorBody(client.message, CODES.invalidValue)));
    return;
  }
  logUnexpected(req, res, err);
  res.status(500).type("application/hal+json").send(JSON.stringify(ontapErrorBody("Internal error", "1")));
}

/** Express error middleware for the /api router. */
export function ontapErrorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  sendOntapError(req, res, err);
}
