import { randomUUID } from "node:crypto";
import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { withRequestId, type Logger } from "../core/log.js";
import { REQUEST_ID_HEADER, WELL_FORMED_REQUEST_ID } from "./request-id.js";

/** One upgrade dispatcher for every WebSocket endpoint on the shared HTTP(S) listener. */
export interface WebSocketRoute {
  /** Returns params when the route handles this path. */
  match(pathname: string): Record<string, string> | undefined;
  /** May answer without upgrading (e.g. 404) by returning a status and JSON body instead. */
  accept?(params: Record<string, string>, req: IncomingMessage): Promise<{ status: number; body: unknown } | undefined>;
  handle(ws: WebSocket, req: IncomingMessage, params: Record<string, string>): void;
}

/** Checks every upgrade passes before any route sees it: the origin policy first (a browser always sends Origin here), then credentials. */
export interface UpgradeChecks {
  /** Why a page of this request's origin may not open a socket, or undefined. */
  originRefusal(req: IncomingMessage): string | undefined;
  isAuthorized(req: IncomingMessage): boolean;
}

/**
 * `maxPayload`: the largest message a client may send (ws's default, 100 MiB, let a few frames hold gigabytes);
 * a larger one closes the socket with 1009 (message too big) before it is buffered.
 *
 * Every upgrade is a line of the request log with its outcome, as a request is (`{"msg":"request","id","method",
 * "path","status","ms","websocket":true}`: 101 when the socket opened, else the refusal's status), and an opened
 * socket a second line when it closes (`"msg":"websocket closed"`, its close code and how long it was open). The
 * id is the caller's X-Request-Id when well formed, else a new one, echoed in the answer (101 or refusal) and
 * carried by every line logged while the upgrade is decided.
 */
export function createUpgradeHandler(routes: WebSocketRoute[], checks: UpgradeChecks, log: Logger, maxPayload: number) {
  const wss = new WebSocketServer({ noServer: true, maxPayload });
  const upgrades = new WeakMap<IncomingMessage, { id: string; reject: (status: number, headers: Record<string, string>, body?: string) => void }>();
  wss.on("headers", (headers, req) => headers.push(`${REQUEST_ID_HEADER}: ${upgrades.get(req)?.id}`));
  // A handshake ws itself refuses (no or a bad Sec-WebSocket-Key, an unsupported version): answered and logged as ours.
  wss.on("wsClientError", (error, _socket, req) => {
    const status = /HTTP method/.test(error.message) ? 405 : 400;
    const headers: Record<string, string> = { "Content-Type": "text/plain; charset=utf-8" };
    if (/Sec-WebSocket-Version/.test(error.message)) headers["Sec-WebSocket-Version"] = "13, 8";
    upgrades.get(req)?.reject(status, headers, error.message);
  });
  const handler = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const started = process.hrtime.bigint();
    const elapsed = () => Number((process.hrtime.bigint() - started) / 1000n) / 1000;
    const incoming = req.headers[REQUEST_ID_HEADER.toLowerCase()];
    const id = typeof incoming === "string" && WELL_FORMED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    // The path only: a query may hold a token.
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    const outcome = (status: number) => log.info("request", { id, method: req.method, path: pathname, status, ms: elapsed(), websocket: true });
    const reject = (status: number, headers: Record<string, string>, body = "") => {
      outcome(status);
      const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`];
      for (const [k, v] of Object.entries({ ...headers, [REQUEST_ID_HEADER]: id, "Content-Length": String(Buffer.byteLength(body)), Connection: "close" })) {
        head.push(`${k}: ${v}`);
      }
      // Destroyed once written: an upgrade socket is nobody's to read, so it would never see the client leave and
      // stay open (one descriptor per refused upgrade, and a server whose close waits for it).
      socket.end(head.join("\r\n") + "\r\n\r\n" + body, () => socket.destroy());
    };
    upgrades.set(req, { id, reject });
    socket.on("error", () => socket.destroy());
    const crossOrigin = checks.originRefusal(req);
    if (crossOrigin) {
      log.warn("websocket upgrade refused", { id, path: pathname, origin: req.headers.origin, reason: crossOrigin });
      return reject(403, { "Content-Type": "application/json" }, JSON.stringify({ message: crossOrigin, status: 403 }));
    }
    if (!checks.isAuthorized(req)) return reject(401, { "WWW-Authenticate": 'Basic realm="Patchbay"' });
    for (const route of routes) {
      const params = route.match(pathname);
      if (!params) continue;
      const refusal = await withRequestId(id, async () => route.accept?.(params, req)).catch((error) => {
        log.error("websocket upgrade failed", { id, path: pathname, error });
        return { status: 500, body: { message: "error" } };
      });
      if (refusal) return reject(refusal.status, { "Content-Type": "application/json" }, JSON.stringify(refusal.body));
      return wss.handleUpgrade(req, socket, head, (ws) => {
        outcome(101);
        const opened = process.hrtime.bigint();
        ws.on("close", (code) =>
          log.info("websocket closed", { id, path: pathname, code, ms: Number((process.hrtime.bigint() - opened) / 1000n) / 1000 }),
        );
        // A frame the protocol forbids (unmasked, a reserved opcode, invalid UTF-8, …) is an error event: without
        // a listener it would end the process. The socket is dropped; each route's close handler releases the rest.
        ws.on("error", () => ws.terminate());
        route.handle(ws, req, params);
      });
    }
    reject(404, { "Content-Type": "text/plain; charset=utf-8" }, "404: Not Found");
  };
  return {
    handler: (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      void handler(req, socket, head).catch((error) => {
        log.error("websocket upgrade failed", { path: req.url, error });
        socket.destroy();
      }),
    close: () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}
