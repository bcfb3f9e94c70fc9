import type { AppContext } from "../../platform/context.js";
import type { WebSocketRoute } from "../../platform/http/websockets.js";
import { openNotificationStream, webSocketSender } from "../notifications/stream.js";

/**
 * `GET /v2/compute/notifications/ws`: the compute's global WebSocket, which a GNS3 controller keeps open to each
 * compute (compat §11.3, §11.4): a ping (cpu/memory) after every second of silence, and every event of every
 * project on this instance with its `project_id` at top level. Client messages are ignored.
 */
export function computeNotificationWebSockets(ctx: AppContext): WebSocketRoute[] {
  return [
    {
      match: (pathname) => (pathname === "/v2/compute/notifications/ws" ? {} : undefined),
      handle(ws, req) {
        const close = openNotificationStream(ctx, { kind: "compute" }, webSocketSender(ctx, ws, req.socket));
        ws.on("close", close);
      },
    },
  ];
}
