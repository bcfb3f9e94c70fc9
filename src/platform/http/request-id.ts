import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { withRequestId, type Logger } from "../core/log.js";

export const REQUEST_ID_HEADER = "X-Request-Id";

/** A caller's id is kept when it is short and plain (UUIDs, ULIDs, trace ids); anything else is replaced. */
export const WELL_FORMED_REQUEST_ID = /^[\w.:=+/-]{1,64}$/;

declare global {
  namespace Express {
    interface Locals {
      requestId: string;
      /** The server's logger, for error handlers that have no application context. */
      log: Logger;
    }
  }
}

/**
 * Gives every request an id (the caller's X-Request-Id if well formed, else a new UUID), echoes it in the
 * response header and handles the request in its scope, so every line logged meanwhile carries it.
 */
export function requestIds(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.get(REQUEST_ID_HEADER);
    const id = incoming && WELL_FORMED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.locals.log = log;
    res.setHeader(REQUEST_ID_HEADER, id);
    withRequestId(id, next);
  };
}

/** Logs an error no handler expected (a bug, a database failure) with the request it broke. */
export function logUnexpected(req: Request, res: Response, err: unknown): void {
  res.locals.log.error("unexpected error", { id: res.locals.requestId, method: req.method, path: req.path, error: err });
}
