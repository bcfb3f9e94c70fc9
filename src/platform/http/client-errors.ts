import type { NextFunction, Request, Response } from "express";
import { logUnexpected } from "./request-id.js";

/**
 * Errors raised by Express's own machinery before a handler runs (body-parser: unsupported charset or
 * content-encoding, malformed or oversized bodies; router: a path parameter that is not valid
 * percent-encoding) carry an HTTP status. A 4xx one is the client's mistake and its message is safe to show;
 * each face answers it in its own error shape.
 */
export function httpClientError(err: unknown): { status: number; message: string } | undefined {
  const e = err as { status?: unknown; statusCode?: unknown; message?: unknown } | null;
  const status = Number(e?.status ?? e?.statusCode);
  if (!Number.isInteger(status) || status < 400 || status > 499) return undefined;
  return { status, message: typeof e?.message === "string" ? e.message : "Bad request" };
}

/** Last resort behind every feature's router: never Express's HTML page (which prints stack traces). */
export function fallbackErrorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const client = httpClientError(err);
  if (!client) logUnexpected(req, res, err);
  if (res.headersSent) return void res.destroy();
  const status = client?.status ?? 500;
  res.status(status).type("application/json").send(JSON.stringify({ message: client?.message ?? "Internal server error", status }));
}
