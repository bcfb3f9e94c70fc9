import express from "express";
import type { Feature } from "../platform/feature.js";
import { NotFoundError } from "../platform/core/errors.js";
import { anyOf } from "../platform/events.js";
import { ReadViews } from "../platform/read-views.js";
import { objectsTopic, quotaTopic, RULE_PAGES } from "./core/events.js";
import { mountCluster } from "./cluster/rest.js";
import { mountJobs } from "./jobs/rest.js";
import { recoverJobs, scheduleJobSweep } from "./jobs/operations.js";
import { CODES } from "./core/codes.js";
import { checkBody } from "./ontap/body.js";
import { ontapErrorHandler } from "./ontap/errors.js";
import { ontapFace } from "./openapi.js";
import { mountQtrees } from "./qtrees/rest.js";
import { mountQuotaReports } from "./quota-reports/rest.js";
import { mountQuotaRules } from "./quota-rules/rest.js";
import { mountSvms } from "./svms/rest.js";
import { recoverEnforcement, ResizeQueue } from "./volumes/enforcement.js";
import { mountVolumes } from "./volumes/rest.js";

/** The ONTAP REST face under /api. */
export const storageFeature: Feature = {
  name: "storage",
  async start(ctx) {
    // Crash recovery before serving: nothing may stay queued, running or resizing after a kill.
    const failedJobs = await recoverJobs(ctx);
    const volumes = await recoverEnforcement(ctx);
    if (failedJobs || volumes.length) ctx.log.info("storage: recovered after an interruption", { failedJobs, volumes });
    const pages = new ReadViews();
    pages.follow(ctx, anyOf(quotaTopic, objectsTopic), () => RULE_PAGES);
    ctx.services.storage = { resizes: new ResizeQueue(), stopJobSweep: scheduleJobSweep(ctx), pages };
  },
  async stop(ctx) {
    ctx.services.storage.stopJobSweep();
    await ctx.services.storage.pages.stop();
  },
  mount(app, ctx) {
    const router = express.Router({ caseSensitive: true }); // as the app's (server.ts)
    router.use(express.json({ limit: ctx.config.bodyLimit, strict: false, type: () => true }), checkBody);
    mountCluster(router);
    mountJobs(router, ctx);
    mountSvms(router, ctx);
    mountVolumes(router, ctx);
    mountQtrees(router, ctx);
    mountQuotaRules(router, ctx);
    mountQuotaReports(router, ctx);
    router.use((req, _res, next) => next(new NotFoundError(`API not found: ${req.method} /api${req.path}`, { code: CODES.notFound })));
    router.use(ontapErrorHandler);
    app.use("/api", router);
  },
  api: () => ontapFace,
  graphqlPlugins: async (ctx) => {
    const [{ useRulePagesReadCache }, { useSharedSubscriptions }] = await Promise.all([
      import("./quota-rules/read-cache.js"),
      import("../platform/graphql/shared-subscriptions.js"),
    ]);
    return [useRulePagesReadCache(ctx.services.storage.pages), useSharedSubscriptions(ctx, new Set(["quotaChanges"]))];
  },
};
