import { z } from "zod";
import { ConflictError } from "../../platform/errors.js";
import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { GNS3_VERSION } from "../version.js";

export function serverRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("GET", "/v2/version", ({ res }) => sendJson(res, 200, { version: GNS3_VERSION, local: ctx.config.local }));
  routes.add(
    "POST",
    "/v2/version",
    ({ res, body }) => {
      if (body.version !== GNS3_VERSION) {
        throw new ConflictError(`Client version ${body.version} is not the same as server version ${GNS3_VERSION}`);
      }
      sendJson(res, 200, { version: GNS3_VERSION });
    },
    { schema: z.strictObject({ version: z.string(), local: z.boolean().optional() }) },
  );
}
