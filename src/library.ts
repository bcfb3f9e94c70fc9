// The server as the tests drive it, from the bundle production runs (src/bundle.ts). Whatever a test applies to a
// running server's own objects (its context, its database client) is here: the copy under src/ that vitest loads
// is a second module graph, with its own classes (Prisma's errors) and module state.
export { startServer } from "./server.js";
export { loadConfig } from "./platform/config.js";
export { loadDemoFixture } from "./storage/demo.js";
export { optimizeDatabase } from "./platform/db/maintenance.js";
export { jobOwner } from "./storage/jobs/operations.js";
export { publishTopologyEvent } from "./emulation/core/events.js";
export { projectDir } from "./emulation/projects/serialize.js";
export { toGns3Notification } from "./emulation/notifications/wire.js";
