import type { AppContext } from "../../../platform/context.js";
import { readRawBody, sendJson, type Gns3Routes } from "../../rest/kit.js";
import { forwardToCompute } from "../../computes/forwarding.js";
import { imageRoutes } from "../../images/rest.js";
import { networkInterfaces } from "../network.js";
import { dockerImages, localDockerImages } from "../docker-images.js";

/**
 * The controller's pass-through to a compute (compat §8.2) and what this compute answers to it (network
 * interfaces). The image routes are added first: GNS3 matches them before the generic forwarder, and uploads
 * stream instead of being buffered.
 */
export function forwardingRoutes(routes: Gns3Routes, ctx: AppContext): void {
  // The docker images of a compute (compat-docker §1.1): the GUI's Docker template wizard and node dialog list them.
  // Here, dockerd's local images; another compute's through its own route. 409 when its dockerd does not answer.
  routes.add("GET", "/v2/compute/docker/images", async ({ res }) => sendJson(res, 200, await localDockerImages()));
  routes.add("GET", "/v2/computes/{compute_id}/docker/images", async ({ res, params }) => sendJson(res, 200, await dockerImages(ctx, params.compute_id)));
  imageRoutes(routes, ctx);
  const C = "/v2/computes/{compute_id}/{emulator}";
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
}
