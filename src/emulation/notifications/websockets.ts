import type { AppContext } from "../../platform/context.js";
import { DomainError } from "../../platform/core/errors.js";
import type { WebSocketRoute } from "../../platform/http/websockets.js";
import { getProject } from "../projects/lookup.js";
import { openNotificationStream, webSocketSender, type StreamScope } from "./stream.js";

/** The GNS3 WebSocket notification streams: one text frame per message; client messages are ignored. */
export function notificationWebSockets(ctx: AppContext): WebSocketRoute[] {
  const route = (pattern: RegExp, scopeOf: (params: Record<string, string>) => StreamScope): WebSocketRoute => ({
    match: (pathname) => {
      const m = pattern.exec(pathname);
      return m ? { ...m.groups } : undefined;
    },
    // An unknown project is refused with GNS3's JSON 404 instead of an upgrade.
    async accept(params) {
      if (!params.project_id) return undefined;
      try {
        await getProject(ctx, params.project_id);
        return undefined;
      } catch (e) {
        if (e instanceof DomainError) return { status: e.status, body: { message: e.message, status: e.status } };
        throw e;
      }
    },
    handle(ws, req, params) {
      const scope = scopeOf(params);
      const detach = scope.kind === "project" ? ctx.services.emulation.listeners.attach(scope.projectId) : () => {};
      const close = openNotificationStream(ctx, scope, webSocketSender(ctx, ws, req.socket));
      ws.on("close", () => {
        close();
        detach();
      });
    },
  });
  return [
    route(/^\/v2\/notifications\/ws$/, () => ({ kind: "controller" })),
    route(/^\/v2\/projects\/(?<project_id>[^/]+)\/notifications\/ws$/, (p) => ({ kind: "project", projectId: p.project_id })),
  ];
}
