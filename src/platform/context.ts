import type { Config } from "./config.js";
import type { Db } from "./db/client.js";
import type { EventBus } from "./events.js";
import type { Logger } from "./core/log.js";

/**
 * What features build in their start() and operations reach through `ctx.services`: each feature declares its
 * slot by declaration merging, next to its feature.ts (e.g. `emulation` in src/emulation/services.ts).
 */
export interface FeatureServices {}

/** What every operation may use. Built once per server; GraphQL and REST adapters pass the same object. */
export interface AppContext {
  config: Config;
  db: Db;
  bus: EventBus;
  log: Logger;
  /** Filled by the features' start() before anything is served; adapters' copies of the context share it. */
  services: FeatureServices;
  /** Asks the server to close gracefully (the same path as SIGTERM); returns at once. */
  requestShutdown(): void;
  /** In a GraphQL subscription: aborted when the operation ends (graphql/subscription-scope.ts). */
  operationEnded?: AbortSignal;
}
