// The server as the tests drive it, from the bundle production runs (src/bundle.ts). Whatever a test applies to a
// running server's own objects (its context, its database client) is here: the copy under src/ that vitest loads
// is a second module graph, with its own classes (Prisma's errors) and module state (a capture's packet feed).
export { startServer } from "./server.js";
export { loadConfig } from "./platform/config.js";
export { loadDemoFixture } from "./storage/demo.js";
export { optimizeDatabase } from "./platform/db/maintenance.js";
export { jobOwner } from "./storage/jobs/operations.js";
export { publishTopologyEvent } from "./emulation/core/events.js";
export { projectDir } from "./emulation/projects/serialize.js";
export { toGns3Notification } from "./emulation/notifications/wire.js";
export { PacketFeed } from "./emulation/runtime/packet-feed.js"; // PacketFeed.of finds a capture's feed in module state
