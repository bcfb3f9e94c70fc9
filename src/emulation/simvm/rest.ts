import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { listEngines, listEngineVms } from "./engines.js";
import { getSimVmSettings, simVmUpdateSchema, updateSimVmSettings } from "./operations.js";

/** The VM host routes, under our name (/v2/simvm) and GNS3's (/v2/gns3vm). */
export function simVmRoutes(routes: Gns3Routes, ctx: AppContext): void {
  for (const base of ["/v2/simvm", "/v2/gns3vm"]) {
    routes
      .add("GET", base, async ({ res }) => sendJson(res, 200, await getSimVmSettings(ctx)))
      .add("PUT", base, async ({ res, body }) => sendJson(res, 201, await updateSimVmSettings(ctx, body)), { schema: simVmUpdateSchema })
      .add("GET", `${base}/engines`, ({ res }) => sendJson(res, 200, listEngines()))
      .add("GET", `${base}/engines/{engine}/vms`, async ({ res, params }) => sendJson(res, 200, await listEngineVms(ctx, params.engine)));
  }
}
