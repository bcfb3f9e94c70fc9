import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import type { AppContext } from "../../platform/context.js";
import { DomainError, NotFoundError } from "../../platform/core/errors.js";
import type { WebSocketRoute } from "../../platform/http/websockets.js";
import { trackStream } from "../../platform/ops/metrics.js";
import { getComputeNode } from "../compute-api/nodes/operations.js";
import { getProject } from "../projects/lookup.js";
import { openLocalConsole, openNodeConsole, type ConsoleLink } from "./link.js";

/**
 * The web console (compat: "The web console"): `GET /v2/projects/{p}/nodes/{n}/console/ws` on the controller and
 * `GET /v2/compute/projects/{p}/{emulator}/nodes/{n}/console/ws` on a compute. Each WebSocket gets its own
 * connection to the node's telnet console (link.ts). A client's text frame goes to the console as its UTF-8 bytes,
 * a binary frame as it is; the console's output comes back as binary frames of at most 1,024 bytes (a controller
 * relays a compute's frames as they come: text as text, binary as binary). When the console ends (the node
 * stopped) the socket is closed with 1000.
 *
 * Refusals are answered before the upgrade, in GNS3's JSON error shape: 404 for an unknown project or node (or
 * one of another emulator, on a compute), 409 for a console that is not telnet, a node not started, or a console
 * that does not answer; a remote compute's refusal is passed on (504 when it cannot be reached).
 */
export const CONSOLE_FRAME_BYTES = 1024;
/** Output not yet written to a slow client beyond which the console is no longer read until it catches up. */
const OUTPUT_HIGH_WATER = 256 * 1024;

/** Moves bytes between a client's WebSocket and its console link until either side ends. */
export function pumpConsole(ctx: AppContext, ws: WebSocket, link: ConsoleLink): void {
  const untrack = trackStream(ctx, "gns3:console");
  let paused = false;
  const written = () => {
    if (paused && ws.bufferedAmount < OUTPUT_HIGH_WATER / 2) {
      paused = false;
      link.resume();
    }
  };
  link.onOutput((chunk, binary) => {
    if (ws.readyState !== ws.OPEN) return;
    if (!binary) ws.send(chunk, { binary: false }, written);
    else for (let i = 0; i < chunk.length; i += CONSOLE_FRAME_BYTES) ws.send(chunk.subarray(i, i + CONSOLE_FRAME_BYTES), { binary: true }, written);
    if (!paused && ws.bufferedAmount > OUTPUT_HIGH_WATER) {
      paused = true;
      link.pause();
    }
  });
  ws.on("message", (data: Buffer, binary: boolean) => {
    if (!link.send(data, binary)) ws.pause();
  });
  link.onDrain(() => ws.resume());
  link.onEnd(() => {
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
  });
  ws.on("close", () => {
    untrack();
    link.close();
  });
}

/** `[^/]+` path parameters arrive percent-encoded; one that does not decode names nothing. */
function decoded(params: Record<string, string>): Record<string, string> | undefined {
  try {
    return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, decodeURIComponent(v)]));
  } catch {
    return undefined;
  }
}

function consoleRoute(ctx: AppContext, pattern: RegExp, open: (params: Record<string, string>) => Promise<ConsoleLink>): WebSocketRoute {
  // The link opened while deciding whether to upgrade, until the upgraded socket takes it.
  const pending = new WeakMap<IncomingMessage, ConsoleLink>();
  return {
    match: (pathname) => {
      const m = pattern.exec(pathname);
      return m ? { ...m.groups } : undefined;
    },
    async accept(params, req) {
      try {
        const p = decoded(params);
        if (!p) throw new NotFoundError("404: Not Found");
        const link = await open(p);
        // The client may have left while the console was being reached: its close event is already gone.
        if (req.socket.destroyed) {
          link.close();
          return { status: 499, body: { message: "The client closed the connection", status: 499 } };
        }
        pending.set(req, link);
        // A client gone before its upgrade completes (or a handshake ws refuses) leaves no console connection behind.
        req.socket.once("close", () => {
          pending.get(req)?.close();
          pending.delete(req);
        });
        return undefined;
      } catch (e) {
        if (e instanceof DomainError) return { status: e.status, body: { message: e.message, status: e.status } };
        throw e;
      }
    },
    handle(ws, req) {
      const link = pending.get(req);
      pending.delete(req);
      if (!link) return void ws.close(1011);
      pumpConsole(ctx, ws, link);
    },
  };
}

export function consoleWebSockets(ctx: AppContext): WebSocketRoute[] {
  return [
    consoleRoute(ctx, /^\/v2\/projects\/(?<project_id>[^/]+)\/nodes\/(?<node_id>[^/]+)\/console\/ws$/, async (p) => {
      await getProject(ctx, p.project_id);
      const node = await ctx.db.node.findFirst({ where: { id: p.node_id, projectId: p.project_id } });
      if (!node) throw new NotFoundError(`Node ID ${p.node_id} doesn't exist`);
      return openNodeConsole(ctx, node);
    }),
    consoleRoute(ctx, /^\/v2\/compute\/projects\/(?<project_id>[^/]+)\/(?<emulator>[^/]+)\/nodes\/(?<node_id>[^/]+)\/console\/ws$/, async (p) =>
      openLocalConsole(ctx, await getComputeNode(ctx, p.project_id, p.emulator, p.node_id)),
    ),
  ];
}
