import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../core/log.js";

/** One structured line per request (with its id), written when the response finishes (or the client goes away). */
export function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const done = () => {
      res.off("finish", done);
      res.off("close", done);
      log.info("request", {
        id: res.locals.requestId,
        method: req.method,
        path: redactUrl(req.originalUrl),
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
      });
    };
    res.on("finish", done);
    res.on("close", done);
    next();
  };
}

/** Query keys whose values are secrets (GNS3 merges the query into the body, so `?password=` is a real input). */
const SECRET_KEY = /pass(word|wd)?|secret|token|api[-_]?key|auth/i;
/** `scheme://user:password@` inside a value: the password part. */
const URL_CREDENTIALS = /(\w+:\/\/[^/:@\s]*):[^/@\s]*@/g;

/** The URL as logged: secret query values and user:password@ credentials replaced by "***". */
function redactUrl(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const key = decodeLoosely(pair.slice(0, eq));
      const value = decodeLoosely(pair.slice(eq + 1));
      if (SECRET_KEY.test(key)) return `${pair.slice(0, eq)}=***`;
      const redacted = value.replace(URL_CREDENTIALS, "$1:***@");
      return redacted === value ? pair : `${pair.slice(0, eq)}=${encodeURIComponent(redacted)}`;
    })
    .join("&");
  return `${url.slice(0, q)}?${query}`;
}

function decodeLoosely(s: string): string {
  try {
    return decodeURIComponent(s.replaceAll("+", " "));
  } catch {
    return s;
  }
}
