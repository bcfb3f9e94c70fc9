// The server's command line, run when loaded. Bundled into dist/patchbay.cjs as its `main` (src/bundle.ts), which the
// package's bin and `npm start` call through dist/launch.js; `npm run dev` runs this file with tsx.
import { ConfigError, helpText, loadConfig, type Config } from "./platform/config.js";
import { describeStartupError } from "./platform/ops/startup-errors.js";
import { VERSION } from "./platform/ops/version.js";

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.argv.slice(2));
} catch (e) {
  // A usage error: one line, with where to look (parseArgs throws TypeErrors for unknown or malformed flags).
  if (!(e instanceof ConfigError || e instanceof TypeError)) throw e;
  console.error(`patchbay: ${e.message} (patchbay --help lists the settings)`);
  process.exit(2);
}
if (config.help) {
  console.log(helpText());
  process.exit(0);
}
if (config.version) {
  console.log(VERSION);
  process.exit(0);
}

// An async function, not top-level await: the bundle `npm start` runs is CommonJS (see scripts/build.mjs).
async function main(config: Config): Promise<void> {
  // Loaded after the arguments are checked, so --help and usage errors answer at once.
  const { startServer } = await import("./server.js");
  const { loadDemoFixture } = await import("./storage/demo.js");
  let server;
  try {
    server = await startServer(config);
    if (config.demo) await loadDemoFixture(server.ctx);
  } catch (e) {
    // A known cause (database down or missing, port taken, data directory unusable) in one line; anything else is a bug.
    const line = describeStartupError(e, config);
    console.error(line ? `patchbay: ${line}` : e);
    process.exit(1);
  }
  // A compute serves only the compute API: GraphiQL there answers 403, so it is not advertised.
  console.error(
    config.mode === "compute"
      ? `Patchbay on ${server.url}  (${VERSION}, compute mode: serves the compute API ${server.url}/v2/compute)`
      : `Patchbay on ${server.url}  (${VERSION}; start page: ${server.url}/  GraphiQL: ${server.url}/graphql)`,
  );

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
}

void main(config);
