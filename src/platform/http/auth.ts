import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** HTTP Basic check shared by REST, GraphQL over HTTP, SSE and WebSocket upgrades. */
export function basicAuthCheck(auth: { user: string; password: string } | undefined) {
  if (!auth) return (_req: IncomingMessage) => true;
  const expected = Buffer.from(`${auth.user}:${auth.password}`);
  return (req: IncomingMessage): boolean => {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? "");
    if (!m) return false;
    const given = Buffer.from(m[1], "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
}

export const WWW_AUTHENTICATE = 'Basic realm="Patchbay", charset="UTF-8"';
