#!/usr/bin/env -S node --import tsx
import { ConfigError, helpText, loadConfig } from "./platform/config.js";

let config;
try {
  config = loadConfig(process.argv.slice(2));
} catch (e) {
  console.error(e instanceof ConfigError || e instanceof TypeError ? e.message : e);
  console.error(helpText());
  process.exit(2);
}
if (config.help) {
  console.log(helpText());
  process.exit(0);
}

// Loaded after the arguments are checked, so --help and usage errors answer at once.
const { startServer } = await import("./server.js");
const { loadDemoFixture } = await import("./storage/demo.js");
const server = await startServer(config);
if (config.demo) await loadDemoFixture(server.ctx);
console.error(`Patchbay on ${server.url}  (GraphiQL: ${server.url}/graphql)`);

// A bug that escapes every handler still ends the process (its state is unknown), but as a log line.
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (error) => {
    server.ctx.log.error(event, { error });
    process.exit(1);
  });
}

// POST /v2/shutdown closes the server through ctx.requestShutdown; the process then ends normally.
void server.closed.then(() => process.exit(0));

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.ctx.log.info("shutting down", { signal });
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    server.close().then(() => process.exit(0), () => process.exit(1));
  });
}
