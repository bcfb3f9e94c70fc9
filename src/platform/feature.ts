import type { Express } from "express";
import type { Plugin } from "graphql-yoga";
import type { AppContext } from "./context.js";
import type { ApiFace } from "./http/openapi.js";
import type { WebSocketRoute } from "./http/websockets.js";

/**
 * A product area (storage, emulation). The server is its composition root: it calls every feature's start() in
 * order after migrations, before routes are mounted and the listener opens, and on close every stop() in reverse
 * order, after the listener and its connections are closed and before the bus and the database go away.
 */
export interface Feature {
  name: string;
  /**
   * Builds what the feature runs (its slot in `ctx.services`: runtimes, monitors, queues) and does its start-up
   * work (crash recovery, loading state). Nothing of this may happen as a side effect of mount() or of first use.
   */
  start(ctx: AppContext): Promise<void>;
  /**
   * Start-up work no request needs done first (sweeping a previous run's leftovers off the host), begun once the
   * listener is open. What could collide with it waits for it: the feature gates its own operations.
   */
  listening?(ctx: AppContext): void;
  /** Releases what start() built (child processes, sockets, timers, subscriptions), in reverse order of creation. */
  stop(ctx: AppContext): Promise<void>;
  /** Mount REST routes (each feature owns a path prefix and its legacy error shapes). */
  mount(app: Express, ctx: AppContext): void;
  websockets?(ctx: AppContext): WebSocketRoute[];
  /** Yoga plugins the feature adds to the GraphQL endpoint, loaded when the endpoint is first used (after start()). */
  graphqlPlugins?(ctx: AppContext): Promise<Plugin[]>;
  /** The REST face the feature mounts, for its OpenAPI document (/openapi/<id>.json). */
  api?(ctx: AppContext): ApiFace;
}
