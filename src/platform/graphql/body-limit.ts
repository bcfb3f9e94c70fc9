import express, { type NextFunction, type Request, type Response } from "express";
import { httpClientError } from "../http/client-errors.js";

/**
 * Yoga reads the bodies of GraphQL requests itself, with no size limit. Every body but a multipart upload (held
 * to the upload limit by Yoga's own parser, see yoga.ts) is read here first — decompressed, and held to
 * PATCHBAY_BODY_LIMIT as it arrives — and handed to Yoga as bytes. A body refused here (413 beyond the limit,
 * 415 for an unknown Content-Encoding, 400 for a broken one) is answered as a GraphQL error.
 */
export function graphqlBodyLimit(limit: string) {
  const read = express.raw({ type: (req) => !/^multipart\//i.test(req.headers["content-type"] ?? ""), limit });
  const refuse = (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const client = httpClientError(err);
    if (!client || res.headersSent) return next(err);
    const code = client.status === 413 ? "REQUEST_ENTITY_TOO_LARGE" : "BAD_REQUEST";
    res.status(client.status).json({ errors: [{ message: client.message, extensions: { code } }] });
  };
  return [read, refuse];
}
