import type { AppContext } from "../platform/context.js";
import type { Gns3Routes } from "./rest/kit.js";
import { computeNodeRoutes } from "./compute-api/nodes/rest.js";
import { computeProjectRoutes } from "./compute-api/projects/rest.js";
import { forwardingRoutes } from "./compute-api/forwarding/rest.js";
import { computePortRoutes } from "./computes/ports.js";
import { computesRoutes } from "./computes/rest.js";
import { drawingRoutes } from "./drawings/rest.js";
import { symbolRoutes } from "./symbols/rest.js";
import { captureRoutes } from "./links/capture-rest.js";
import { linkRoutes } from "./links/rest.js";
import { lifecycleRoutes } from "./nodes/lifecycle-rest.js";
import { nodeRoutes } from "./nodes/rest.js";
import { notificationRoutes } from "./notifications/rest.js";
import { projectRoutes } from "./projects/rest.js";
import { qemuHostRoutes } from "./runtime/qemu-rest.js";
import { serverRoutes } from "./server/rest.js";
import { simVmRoutes } from "./simvm/rest.js";
import { snapshotRoutes } from "./snapshots/rest.js";
import { templateRoutes } from "./templates/rest.js";

/** Every GNS3 v2 route module; each adds its routes to the shared table. */
export function registerRoutes(routes: Gns3Routes, ctx: AppContext): void {
  serverRoutes(routes, ctx);
  projectRoutes(routes, ctx);
  snapshotRoutes(routes, ctx);
  templateRoutes(routes, ctx);
  computesRoutes(routes, ctx);
  computePortRoutes(routes, ctx);
  computeProjectRoutes(routes, ctx);
  computeNodeRoutes(routes, ctx);
  forwardingRoutes(routes, ctx);
  symbolRoutes(routes, ctx);
  simVmRoutes(routes, ctx);
  nodeRoutes(routes, ctx);
  linkRoutes(routes, ctx);
  drawingRoutes(routes, ctx);
  lifecycleRoutes(routes, ctx);
  captureRoutes(routes, ctx);
  qemuHostRoutes(routes);
  notificationRoutes(routes, ctx);
}
