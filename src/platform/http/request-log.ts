import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../log.js";

/** One structured line per request, written when the response finishes (or the client goes away). */
export function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const done = () => {
      res.off("finish", done);
      res.off("close", done);
      log.info("request", {
        method: req.method,
        path: req.originalUrl,
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
      });
    };
    res.on("finish", done);
    res.on("close", done);
    next();
  };
}
