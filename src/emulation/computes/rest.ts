import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { GNS3_VERSION } from "../core/version.js";
import { localCapabilities } from "./model.js";
import { z } from "zod";
import { computeFields } from "./schema.js";
import { createCompute, deleteCompute, getCompute, listComputes, updateCompute } from "./operations.js";
import { controllerStatistics } from "./statistics.js";
import { hostStatistics } from "./usage.js";

const f = computeFields;
/** GNS3's compute object over the contract's field rules; PUT takes the same keys, none required (compute_id ignored). */
const wireFields = { compute_id: f.computeId, name: f.name, protocol: f.protocol, host: f.host, port: f.port, user: f.user, password: f.password };
const createSchema = z.strictObject({
  ...wireFields,
  compute_id: f.computeId.optional(),
  name: f.name.optional(),
  user: f.user.optional(),
  password: f.password.optional(),
});
const updateSchema = z.strictObject(wireFields).partial();

export function computesRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes
    .add("GET", "/v2/computes", async ({ res }) => sendJson(res, 200, await listComputes(ctx)))
    .add(
      "POST",
      "/v2/computes",
      async ({ res, body: { compute_id, ...b } }) => sendJson(res, 201, await createCompute(ctx, { ...b, computeId: compute_id })),
      { schema: createSchema },
    )
    .add("GET", "/v2/computes/{compute_id}", async ({ res, params }) => sendJson(res, 200, await getCompute(ctx, params.compute_id)))
    .add(
      "PUT",
      "/v2/computes/{compute_id}",
      async ({ res, params, body: { compute_id: _ignored, ...changes } }) => sendJson(res, 200, await updateCompute(ctx, params.compute_id, changes)),
      { schema: updateSchema },
    )
    .add("DELETE", "/v2/computes/{compute_id}", async ({ res, params }) => {
      await deleteCompute(ctx, params.compute_id);
      res.status(204).end();
    })
    .add("GET", "/v2/statistics", async ({ res }) => sendJson(res, 200, await controllerStatistics(ctx)));

  // The compute face of this server, which lets another Patchbay (or GNS3 controller) register it as a compute.
  routes
    .add("GET", "/v2/compute/capabilities", ({ res }) => sendJson(res, 200, localCapabilities(ctx)))
    .add("GET", "/v2/compute/version", ({ res }) => sendJson(res, 200, { version: GNS3_VERSION, local: ctx.config.local }))
    .add("GET", "/v2/compute/statistics", ({ res }) => sendJson(res, 200, hostStatistics(ctx.config.dataDir)));
}
