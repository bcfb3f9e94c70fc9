import type { RequestHandler } from "express";
import type { Config } from "../../platform/config.js";
import type { WebSocketRoute } from "../../platform/http/websockets.js";
import { SERVER_HEADER, sendJson } from "../rest/kit.js";

/**
 * PATCHBAY_MODE=compute: the instance is a worker that a controller drives, so it serves only what a controller
 * needs of a compute — the compute API (`/v2/compute/...`: capabilities, version, statistics, projects, nodes,
 * NIOs, captures, UDP ports, notifications) and `/v2/version`. Everything a user would otherwise drive directly
 * (controller projects, computes, templates, symbols, GraphQL, the storage API) answers 403, so that a lab is
 * never half-managed by the compute behind its controller's back.
 */
const COMPUTE_PATHS = [/^\/v2\/compute(\/|$)/, /^\/v2\/version\/?$/];

const refused = (method: string, path: string) => ({
  message: `This server runs in compute mode (PATCHBAY_MODE=compute): ${method} ${path} is served by its controller`,
  status: 403,
});

export function computeModeGuard(config: Pick<Config, "mode">): RequestHandler {
  return (req, res, next) => {
    if (config.mode !== "compute" || COMPUTE_PATHS.some((p) => p.test(req.path))) return next();
    res.set({ Server: SERVER_HEADER });
    sendJson(res, 403, refused(req.method, req.path));
  };
}

/** The same rule for WebSocket upgrades (controller notification streams, GraphQL subscriptions). */
export function computeModeWebSockets(config: Pick<Config, "mode">, routes: WebSocketRoute[]): WebSocketRoute[] {
  if (config.mode !== "compute") return routes;
  return routes.map((route) => ({
    ...route,
    accept: async (params, req) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (!COMPUTE_PATHS.some((p) => p.test(path))) return { status: 403, body: refused("GET", path) };
      return route.accept?.(params, req);
    },
  }));
}
