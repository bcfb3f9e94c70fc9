import { createHmac, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";

/**
 * Signed download URLs: a GraphQL field hands out `<path>?<query>&token=<expires>.<signature>`, where the
 * signature is an HMAC-SHA256 over the method, the exact path and query as sent (the token pair removed) and the
 * expiry. Such a URL is its own credential: it opens that one GET (or HEAD) until it expires, without HTTP Basic
 * credentials, and nothing else — another path, another query, another method or a later time does not verify.
 * On the routes the gate guards, a request that carries a token always has it checked (also with valid
 * credentials or with authentication off), so a bad token never passes unnoticed.
 */
const TOKEN_PARAM = "token";
/** The longest validity a caller may ask for, in seconds. */
export const MAX_VALIDITY_SECONDS = 3600;

export interface SignedUrl {
  /** Path and query on this server (relative to its address). */
  url: string;
  expiresAt: Date;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

const signature = (secret: string, method: string, pathAndQuery: string, expires: number) =>
  createHmac("sha256", secret).update(`${method}\n${pathAndQuery}\n${expires}`).digest();

/** A GET URL for `pathAndQuery` (already percent-encoded as it will be requested), valid for `seconds`. */
export function signUrl(secret: string, pathAndQuery: string, seconds: number): SignedUrl {
  const expires = nowSeconds() + seconds;
  const token = `${expires}.${signature(secret, "GET", pathAndQuery, expires).toString("base64url")}`;
  return { url: `${pathAndQuery}${pathAndQuery.includes("?") ? "&" : "?"}${TOKEN_PARAM}=${token}`, expiresAt: new Date(expires * 1000) };
}

type TokenCheck = { presented: false } | { presented: true; valid: boolean };

/** Checks the token of a request line (`originalUrl`): absent, or valid for exactly this method, path and query now. */
function checkToken(secret: string, method: string, originalUrl: string): TokenCheck {
  const q = originalUrl.indexOf("?");
  if (q < 0) return { presented: false };
  const pairs = originalUrl.slice(q + 1).split("&");
  const tokens = pairs.filter((p) => p.startsWith(`${TOKEN_PARAM}=`));
  if (tokens.length === 0) return { presented: false };
  const rest = pairs.filter((p) => !p.startsWith(`${TOKEN_PARAM}=`));
  const signed = originalUrl.slice(0, q) + (rest.length ? `?${rest.join("&")}` : "");
  // The expiry as signUrl writes it (no leading zero, no sign): one URL has exactly one valid token.
  const m = tokens.length === 1 ? /^([1-9]\d{0,11})\.([A-Za-z0-9_-]{43})$/.exec(tokens[0].slice(TOKEN_PARAM.length + 1)) : null;
  if (!m) return { presented: true, valid: false };
  const expires = Number(m[1]);
  // Compared as text, not decoded: base64url's last character carries 2 bits that decoding ignores, and a token
  // differing only there is not the one handed out. HEAD is the GET without its body: the same URL serves both.
  const given = Buffer.from(m[2]);
  const expected = Buffer.from(signature(secret, method === "HEAD" ? "GET" : method, signed, expires).toString("base64url"));
  const valid = timingSafeEqual(given, expected) && nowSeconds() <= expires;
  return { presented: true, valid };
}

declare global {
  namespace Express {
    interface Locals {
      /** The request carried a valid signed-URL token: it needs no other credentials. */
      signedUrl?: boolean;
    }
  }
}

/**
 * Middleware before authentication: a valid token marks the request as authorized (`res.locals.signedUrl`), an
 * invalid one is refused at once with `refuse` (403 in the face's error shape); without a token nothing changes.
 */
export function signedUrlGate(secret: string, refuse: (res: Response) => void) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const check = checkToken(secret, req.method, req.originalUrl);
    if (!check.presented) return next();
    if (!check.valid) return refuse(res);
    res.locals.signedUrl = true;
    next();
  };
}
