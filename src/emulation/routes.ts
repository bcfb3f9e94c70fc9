import type { AppContext } from "../platform/context.js";
import type { Gns3Routes } from "./rest/kit.js";
import { computeNodeRoutes } from "./compute-api/nodes-rest.js";
import { computeProjectRoutes } from "./compute-api/projects-rest.js";
import { forwardingRoutes } from "./compute-api/forwarding-rest.js";
import { computesRoutes } from "./computes/routes.js";
import { symbolRoutes } from "./symbols/routes.js";
import { linkRoutes } from "./links/rest.js";
import { nodeRoutes } from "./nodes/rest.js";
import { notificationRoutes } from "./notifications/rest.js";
import { projectRoutes } from "./projects/rest.js";
import { runtimeRoutes } from "./runtime/rest.js";
import { serverRoutes } from "./server/routes.js";
import { simVmRoutes } from "./simvm/routes.js";
import { snapshotRoutes } from "./snapshots/rest.js";

/** Every GNS3 v2 route module; each adds its routes to the shared table. */
export function registerRoutes(routes: Gns3Routes, ctx: AppContext): void {
  serverRoutes(routes, ctx);
  projectRoutes(routes, ctx);
  snapshotRoutes(routes, ctx);
  computesRoutes(routes, ctx);
  computeProjectRoutes(routes, ctx);
  computeNodeRoutes(routes, ctx);
  forwardingRoutes(routes, ctx);
  symbolRoutes(routes, ctx);
  simVmRoutes(routes, ctx);
  nodeRoutes(routes, ctx);
  linkRoutes(routes, ctx);
  runtimeRoutes(routes, ctx);
  notificationRoutes(routes, ctx);
}
