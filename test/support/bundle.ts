import { createRequire } from "node:module";

/**
 * The server the tests start: dist/patchbay.cjs, the file `npm start` and the package's bin run (build-once.ts
 * rebuilds it from the current sources before the suite). Node's require cache holds it once per worker process,
 * however many test files the worker runs. What a test applies to a running server (its context, its database
 * client) comes from here too, not from src/: see src/library.ts.
 */
const bundle: typeof import("../../src/bundle.js") = createRequire(import.meta.url)("../../dist/patchbay.cjs");

export const {
  startServer,
  loadConfig,
  loadDemoFixture,
  optimizeDatabase,
  jobOwner,
  publishTopologyEvent,
  projectDir,
  toGns3Notification,
  PacketFeed,
} = await bundle.library();
