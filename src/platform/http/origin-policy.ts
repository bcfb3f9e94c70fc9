import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, Response } from "express";

/**
 * One origin policy for every door (REST, GraphQL over HTTP and SSE, every WebSocket upgrade). A browser attaches
 * the credentials it holds for this server to requests any page makes, so what a page of another origin may do is
 * decided here, before authentication and before any handler runs:
 * - a request with no Origin header and no `Sec-Fetch-Site: cross-site` is not a cross-site browser request (curl,
 *   the GNS3 desktop GUI, Ansible, a same-origin page's GET) and passes;
 * - an Origin equal to the server's own (scheme from TLS, host and port from the Host header) passes;
 * - an origin the operator listed (PATCHBAY_CORS_ORIGINS) gets gns3-server's CORS answers;
 * - anything else is foreign: its preflight fails and every request is refused except a top-level navigation (a
 *   link followed to the landing page, GraphiQL or the API reference, which the user sees). A browser sends
 *   Origin on a GET only for a script's request, whose answer it would hide anyway: refusing it loses nothing and
 *   also covers the reads that have effects (a notification stream keeps an auto_close project open, a GraphQL
 *   subscription holds resources) without a list of them to keep up to date.
 */
type OriginVerdict = { kind: "same-origin" } | { kind: "listed"; origin: string } | { kind: "foreign"; origin: string | undefined };

/** gns3-server exposes every header it sends to its allowed origins (aiohttp_cors `expose_headers="*"`). */
const EXPOSED_HEADERS = "X-Route,Server,Content-Length,Connection,Date";
const PREFLIGHT_REFUSED = "CORS preflight request failed";

/** The serialized origin of a URL (lower-case host, default port dropped), or undefined for "null" and garbage. */
function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function originPolicy(listedOrigins: readonly string[], tls: boolean) {
  const listed = new Set(listedOrigins);
  const ownOrigin = (req: IncomingMessage) => {
    const host = header(req, "host");
    return host ? originOf(`${tls ? "https" : "http"}://${host}`) : undefined;
  };

  const judge = (req: IncomingMessage): OriginVerdict => {
    const sent = header(req, "origin");
    if (sent === undefined) return header(req, "sec-fetch-site") === "cross-site" ? { kind: "foreign", origin: undefined } : { kind: "same-origin" };
    const origin = originOf(sent);
    if (origin && origin === ownOrigin(req)) return { kind: "same-origin" };
    if (origin && listed.has(origin)) return { kind: "listed", origin };
    return { kind: "foreign", origin: sent };
  };

  const isTopLevelNavigation = (req: IncomingMessage) =>
    (req.method === "GET" || req.method === "HEAD") && header(req, "sec-fetch-mode") === "navigate" && header(req, "sec-fetch-dest") === "document";

  /**
   * Express middleware, first of the stack: a preflight carries no credentials, and a foreign request is refused
   * before anything else looks at it. `refuse` answers in the face's error shape (403).
   */
  const http =
    (refuse: (req: Request, res: Response, message: string) => void) =>
    (req: Request, res: Response, next: NextFunction): void => {
      // The answer depends on Origin: a cache must not hand one origin's answer to another.
      if (listed.size) res.vary("Origin");
      const verdict = judge(req);
      if (verdict.kind === "same-origin") return next();
      if (verdict.kind === "foreign") {
        if (req.method === "OPTIONS") return void res.status(403).type("text/plain").send(PREFLIGHT_REFUSED);
        if (isTopLevelNavigation(req)) return next();
        return refuse(req, res, refusal(verdict));
      }
      res.set({ "Access-Control-Allow-Origin": verdict.origin, "Access-Control-Allow-Credentials": "true" });
      const requestedMethod = header(req, "access-control-request-method");
      if (req.method !== "OPTIONS" || requestedMethod === undefined) {
        res.set("Access-Control-Expose-Headers", EXPOSED_HEADERS);
        return next();
      }
      // As aiohttp_cors answers for gns3-server: the method asked for, the headers asked for upper-cased.
      const headers = (header(req, "access-control-request-headers") ?? "").split(",").map((h) => h.trim().toUpperCase()).filter(Boolean);
      res.set({ "Access-Control-Allow-Methods": requestedMethod, "Access-Control-Max-Age": "0" });
      if (headers.length) res.set("Access-Control-Allow-Headers", headers.join(","));
      res.status(200).end();
    };

  /** For an upgrade: the refusal's message, or undefined when the socket may open. */
  const upgradeRefusal = (req: IncomingMessage): string | undefined => {
    const verdict = judge(req);
    return verdict.kind === "foreign" ? refusal(verdict) : undefined;
  };

  return { http, upgradeRefusal };
}

const refusal = (verdict: { origin: string | undefined }) =>
  verdict.origin === undefined
    ? "Cross-site request refused"
    : `Cross-origin request from ${verdict.origin.slice(0, 200)} refused: its origin is not listed in PATCHBAY_CORS_ORIGINS`;

export type OriginPolicy = ReturnType<typeof originPolicy>;
