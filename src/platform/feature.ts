import type { Express } from "express";
import type { AppContext } from "./context.js";
import type { WebSocketRoute } from "./http/websockets.js";

/** A product area (storage, emulation): its REST routes, WebSocket endpoints and start-up work. */
export interface Feature {
  name: string;
  /** Mount REST routes (each feature owns a path prefix and its legacy error shapes). */
  mount(app: Express, ctx: AppContext): void;
  websockets?(ctx: AppContext): WebSocketRoute[];
  /** Runs after migrations, before the listener opens (crash recovery, loading state). */
  start?(ctx: AppContext): Promise<void>;
}
