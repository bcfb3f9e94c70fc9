import type { AppContext } from "../platform/context.js";
import type { ApiFace } from "../platform/http/openapi.js";
import { registerRoutes } from "./routes.js";
import { Gns3Routes } from "./rest/kit.js";

/** The GNS3 v2 face (/v2): every route's body schema is the wire schema its route validates with. */
export function gns3Face(ctx: AppContext): ApiFace {
  return {
    id: "gns3",
    title: "Patchbay GNS3 v2 API",
    description:
      "Wire-compatible with the GNS3 server 2.2 REST API. GNS3 merges the query string into the JSON body before " +
      "validating, so body fields may also be given as query parameters. Notification streams are NDJSON over HTTP " +
      "and JSON frames over WebSocket (`…/notifications/ws`).",
    prefix: "/v2",
    tagDepth: 1,
    errorSchema: {
      type: "object",
      properties: { message: { type: "string" }, status: { type: "integer" }, path: { type: "string" }, method: { type: "string" }, request: {} },
      required: ["message", "status"],
    },
    routes() {
      // Registering has no side effects (handlers run only on requests): a fresh table describes the served one.
      const routes = new Gns3Routes(ctx.config.bodyLimit);
      registerRoutes(routes, ctx);
      return routes.describe();
    },
  };
}
