import type { ReadViews } from "../platform/read-views.js";
import type { ResizeQueue } from "./volumes/enforcement.js";

/** What the storage feature runs for one server, reached as `ctx.services.storage`; built by its start(). */
export interface StorageServices {
  /** Quota enforcement copies after rule changes, per volume (one server's; tests run several in one process). */
  resizes: ResizeQueue;
  /** Ends the periodic sweep of old and abandoned jobs. */
  stopJobSweep(): void;
  /** Quota rule pages as sent (REST bytes; GraphQL results by version), dropped by every storage change. */
  pages: ReadViews;
}

declare module "../platform/context.js" {
  interface FeatureServices {
    storage: StorageServices;
  }
}
