import type { Config } from "./config.js";
import type { Db } from "./db/client.js";
import type { EventBus } from "./events.js";
import type { Logger } from "./log.js";

/** What every operation may use. Built once per server; GraphQL and REST adapters pass the same object. */
export interface AppContext {
  config: Config;
  db: Db;
  bus: EventBus;
  log: Logger;
  /** Closed in reverse order on shutdown (child processes, sockets, timers that features own). */
  onShutdown(fn: () => Promise<void> | void): void;
  /** Asks the server to close gracefully (the same path as SIGTERM); returns at once. */
  requestShutdown(): void;
}
