import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { GNS3_VERSION } from "../version.js";
import { localCapabilities } from "./model.js";
import { computeMonitor } from "./monitor.js";
import { placement } from "./placement.js";
import { computeCreateSchema, computeUpdateSchema } from "./schema.js";
import { createCompute, deleteCompute, getCompute, listComputes, updateCompute } from "./service.js";
import { controllerStatistics } from "./statistics.js";
import { hostStatistics } from "./usage.js";

export function computesRoutes(routes: Gns3Routes, ctx: AppContext): void {
  placement(ctx); // before the monitor: placement follows its compute.updated events
  computeMonitor(ctx); // start watching the stored computes with the server, not on first request
  routes
    .add("GET", "/v2/computes", async ({ res }) => sendJson(res, 200, await listComputes(ctx)))
    .add("POST", "/v2/computes", async ({ res, body }) => sendJson(res, 201, await createCompute(ctx, body)), { schema: computeCreateSchema })
    .add("GET", "/v2/computes/{compute_id}", async ({ res, params }) => sendJson(res, 200, await getCompute(ctx, params.compute_id)))
    .add("PUT", "/v2/computes/{compute_id}", async ({ res, params, body }) => sendJson(res, 200, await updateCompute(ctx, params.compute_id, body)), {
      schema: computeUpdateSchema,
    })
    .add("DELETE", "/v2/computes/{compute_id}", async ({ res, params }) => {
      await deleteCompute(ctx, params.compute_id);
      res.status(204).end();
    })
    .add("GET", "/v2/statistics", async ({ res }) => sendJson(res, 200, await controllerStatistics(ctx)));

  // The compute face of this server, which lets another Patchbay (or GNS3 controller) register it as a compute.
  routes
    .add("GET", "/v2/compute/capabilities", ({ res }) => sendJson(res, 200, localCapabilities()))
    .add("GET", "/v2/compute/version", ({ res }) => sendJson(res, 200, { version: GNS3_VERSION, local: ctx.config.local }))
    .add("GET", "/v2/compute/statistics", ({ res }) => sendJson(res, 200, hostStatistics(ctx.config.dataDir)));
}
