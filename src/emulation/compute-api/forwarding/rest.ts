import type { AppContext } from "../../../platform/context.js";
import { readRawBody, sendJson, type Gns3Routes } from "../../rest/kit.js";
import { computeImages, forwardToCompute } from "./operations.js";
import { IMAGE_DIRS, listImages, type ImageEmulator } from "../../images/store.js";
import { networkInterfaces } from "../network.js";

/**
 * The controller's pass-through to a compute (compat §8.2) and what this compute answers to it (image lists,
 * network interfaces). The images route is
 * added first: GNS3 matches it before the generic forwarder.
 */
export function forwardingRoutes(routes: Gns3Routes, ctx: AppContext): void {
  const C = "/v2/computes/{compute_id}/{emulator}";
  routes.add("GET", `${C}/images`, async ({ res, params }) => sendJson(res, 200, await computeImages(ctx, params.compute_id, params.emulator)));
  for (const method of ["GET", "POST", "PUT"]) {
    routes.add(
      method,
      `${C}/{action:.+}`,
      async ({ req, res, params, tail }) => {
        const body = method === "GET" ? undefined : await readRawBody(req, res, ctx.config.bodyLimit);
        const answer = await forwardToCompute(ctx, params.compute_id, method, params.emulator, tail ?? "", body, req.get("content-type"));
        sendJson(res, 200, answer);
      },
      { raw: true },
    );
  }

  routes.add("GET", "/v2/compute/network/interfaces", ({ res }) => sendJson(res, 200, networkInterfaces()));
  for (const emulator of Object.keys(IMAGE_DIRS) as ImageEmulator[]) {
    routes.add("GET", `/v2/compute/${emulator}/images`, async ({ res }) => sendJson(res, 200, await listImages(ctx, emulator)));
  }
}
