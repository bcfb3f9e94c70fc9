import express from "express";
import type { Feature } from "../platform/feature.js";
import { computeNotificationWebSockets } from "./compute-api/notifications.js";
import { consoleWebSockets } from "./consoles/websockets.js";
import { notificationWebSockets } from "./notifications/websockets.js";
import { Gns3Routes } from "./rest/kit.js";
import { gns3Face } from "./openapi.js";
import { registerRoutes } from "./routes.js";
import { startEmulationServices, stopEmulationServices } from "./services.js";

export const emulationFeature: Feature = {
  name: "emulation",
  async start(ctx) {
    ctx.services.emulation = await startEmulationServices(ctx);
  },
  listening(ctx) {
    void ctx.services.emulation.runtime.sweepLeftovers();
  },
  async stop(ctx) {
    await stopEmulationServices(ctx.services.emulation);
  },
  mount(app, ctx) {
    const routes = new Gns3Routes(ctx.config.bodyLimit);
    registerRoutes(routes, ctx);
    const router = express.Router({ caseSensitive: true, strict: false });
    routes.install(router);
    app.use(router);
  },
  websockets: (ctx) => [...notificationWebSockets(ctx), ...computeNotificationWebSockets(ctx), ...consoleWebSockets(ctx)],
  graphqlPlugins: async (ctx) => {
    const [{ useTopologyReadCache }, { useSharedSubscriptions }] = await Promise.all([
      import("./read-model/graphql.js"),
      import("../platform/graphql/shared-subscriptions.js"),
    ]);
    return [
      useTopologyReadCache(ctx.services.emulation.reads),
      useSharedSubscriptions(ctx, new Set(["projectEvents", "controllerEvents", "computeEvents", "templateEvents"])),
    ];
  },
  api: gns3Face,
};
