import express from "express";
import type { Feature } from "../platform/feature.js";
import { NotFoundError } from "../platform/errors.js";
import { mountCluster } from "./cluster-rest.js";
import { scheduleJobSweep } from "./jobs/operations.js";
import { CODES } from "./ontap/codes.js";
import { ontapErrorHandler } from "./ontap/errors.js";
import { mountQtrees } from "./qtrees/rest.js";
import { mountQuotaReports } from "./quota-reports/rest.js";
import { mountQuotaRules } from "./quota-rules/rest.js";
import { mountSvms } from "./svms/rest.js";
import { mountVolumes } from "./volumes/rest.js";

/** The ONTAP REST face under /api. */
export const storageFeature: Feature = {
  name: "storage",
  async start(ctx) {
    ctx.onShutdown(scheduleJobSweep(ctx));
  },
  mount(app, ctx) {
    const router = express.Router();
    router.use(express.json({ limit: ctx.config.bodyLimit, strict: false, type: () => true }));
    mountCluster(router, ctx);
    mountSvms(router, ctx);
    mountVolumes(router, ctx);
    mountQtrees(router, ctx);
    mountQuotaRules(router, ctx);
    mountQuotaReports(router, ctx);
    router.use((req, _res, next) => next(new NotFoundError(`API not found: ${req.method} /api${req.path}`, { code: CODES.notFound })));
    router.use(ontapErrorHandler);
    app.use("/api", router);
  },
};
