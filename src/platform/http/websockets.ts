import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { Logger } from "../core/log.js";

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
 */
export function createUpgradeHandler(routes: WebSocketRoute[], checks: UpgradeChecks, log: Logger, maxPayload: number) {
  const wss = new WebSocketServer({ noServer: true, maxPayload });
  const reject = (socket: Duplex, status: number, headers: Record<string, string>, body = "") => {
    const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`];
    for (const [k, v] of Object.entries({ ...headers, "Content-Length": String(Buffer.byteLength(body)), Connection: "close" })) {
      head.push(`${k}: ${v}`);
    }
    // Destroyed once written: an upgrade socket is nobody's to read, so it would never see the client leave and
    // stay open (one descriptor per refused upgrade, and a server whose close waits for it).
    socket.end(head.join("\r\n") + "\r\n\r\n" + body, () => socket.destroy());
  };
  const handler = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    const crossOrigin = checks.originRefusal(req);
    if (crossOrigin) {
      log.warn("websocket upgrade refused", { path: pathname, origin: req.headers.origin, reason: crossOrigin });
      return reject(socket, 403, { "Content-Type": "application/json" }, JSON.stringify({ message: crossOrigin, status: 403 }));
    }
    if (!checks.isAuthorized(req)) return reject(socket, 401, { "WWW-Authenticate": 'Basic realm="Patchbay"' });
    for (const route of routes) {
      const params = route.match(pathname);
      if (!params) continue;
      const refusal = await route.accept?.(params, req).catch((error) => {
        log.error("websocket upgrade failed", { path: pathname, error });
        return { status: 500, body: { message: "error" } };
      });
      if (refusal) return reject(socket, refusal.status, { "Content-Type": "application/json" }, JSON.stringify(refusal.body));
      return wss.handleUpgrade(req, socket, head, (ws) => {
        // A frame the protocol forbids (unmasked, a reserved opcode, invalid UTF-8, …) is an error event: without
        // a listener it would end the process. The socket is dropped; each route's close handler releases the rest.
        ws.on("error", () => ws.terminate());
        route.handle(ws, req, params);
      });
    }
    reject(socket, 404, { "Content-Type": "text/plain; charset=utf-8" }, "404: Not Found");
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
