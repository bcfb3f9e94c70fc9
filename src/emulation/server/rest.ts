import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { checkClientVersion, GNS3_VERSION } from "../core/version.js";
import { shutdownServer, writeDebugBundle } from "./debug.js";
import { getIouLicense, iouLicenseUpdateSchema, updateIouLicense } from "./iou-license.js";
import { getSettings, guiSettingsSchema, updateSettings } from "./settings.js";

export function serverRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("GET", "/v2/version", ({ res }) => sendJson(res, 200, { version: GNS3_VERSION, local: ctx.config.local }));
  routes.add(
    "POST",
    "/v2/version",
    ({ res, body }) => sendJson(res, 200, { version: checkClientVersion(body.version) }),
    { schema: z.strictObject({ version: z.string(), local: z.boolean().optional() }) },
  );

  // 2.1 compatibility extension: removed from GNS3 in 2.2, kept for older GUIs.
  routes.add("GET", "/v2/settings", async ({ res }) => sendJson(res, 200, await getSettings(ctx)));
  routes.add("POST", "/v2/settings", async ({ res, body }) => sendJson(res, 201, await updateSettings(ctx, body)), {
    schema: guiSettingsSchema,
  });

  // GNS3 2.2 answers a PUT with 201 and the stored settings.
  routes.add("GET", "/v2/iou_license", async ({ res }) => sendJson(res, 200, await getIouLicense(ctx)));
  routes.add("PUT", "/v2/iou_license", async ({ res, body }) => sendJson(res, 201, await updateIouLicense(ctx, body)), {
    schema: iouLicenseUpdateSchema,
  });

  // Both answer 201 with an empty octet-stream body, as GNS3 does.
  routes.add("POST", "/v2/debug", async ({ res }) => {
    await writeDebugBundle(ctx);
    res.status(201).type("application/octet-stream").end();
  });
  routes.add("POST", "/v2/shutdown", async ({ res }) => {
    await shutdownServer(ctx);
    res.status(201).type("application/octet-stream").end();
  });
}
