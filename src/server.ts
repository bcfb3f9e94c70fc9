import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import express, { type Request, type Response } from "express";
import { parseBytes } from "./platform/bytes.js";
import type { Config } from "./platform/config.js";
import type { AppContext, FeatureServices } from "./platform/context.js";
import { createDb } from "./platform/db/client.js";
import { scheduleOptimize } from "./platform/db/maintenance.js";
import { migrate } from "./platform/db/migrate.js";
import { createBus } from "./platform/events.js";
import { redisKeyPrefix } from "./platform/redis-namespace.js";
import { graphqlBodyLimit } from "./platform/graphql/body-limit.js";
import { graphqlOnFirstUse } from "./platform/graphql/on-first-use.js";
import { mountApiDocs } from "./platform/http/api-docs.js";
import { basicAuthCheck, WWW_AUTHENTICATE } from "./platform/http/auth.js";
import { fallbackErrorHandler } from "./platform/http/client-errors.js";
import { originPolicy } from "./platform/http/origin-policy.js";
import { requestIds } from "./platform/http/request-id.js";
import { requestLog } from "./platform/http/request-log.js";
import { routeTable, type RouteEntry } from "./platform/http/route-table.js";
import { signedUrlGate } from "./platform/http/signed-url.js";
import { labPage } from "./platform/http/lab-page.js";
import { checkWebUiDir, WEB_UI_ENTRY, webUi } from "./platform/http/web-ui.js";
import { createUpgradeHandler } from "./platform/http/websockets.js";
import type { Feature } from "./platform/feature.js";
import { createLogger } from "./platform/core/log.js";
import { prepareDataDir } from "./platform/ops/data-dir.js";
import { lockDataDir } from "./platform/ops/data-dir-lock.js";
import { mountHealth } from "./platform/ops/health.js";
import { assertPortFree } from "./platform/ops/port-free.js";
import { loadTlsFiles, type TlsMaterial } from "./platform/ops/tls-files.js";
import { landingPage } from "./platform/ops/landing.js";
import { countedBus, createMetrics, METRICS_CONTENT_TYPE, renderMetrics, requestMetrics } from "./platform/ops/metrics.js";
import { VERSION } from "./platform/ops/version.js";
import { computeModeGuard, computeModeWebSockets } from "./emulation/compute-api/mode.js";
import { sendJson } from "./emulation/rest/kit.js";
import { features } from "./features.js";

export interface RunningServer {
  ctx: AppContext;
  port: number;
  /** Base URL (http or https) of the listener. */
  url: string;
  close(): Promise<void>;
  /** Settles once the server has closed, whoever asked (signal, POST /v2/shutdown). */
  closed: Promise<void>;
  /** The REST routes served (read from the Express router stacks; fuzz tests are generated from it). */
  routes(): RouteEntry[];
}

/**
 * A request the origin policy refused, answered 403 in its API's error shape before its router runs (the API is
 * told by the lower-cased prefix, so a misspelt path gets the same shape). GraphQL's code is its form-POST rule's.
 */
function refuseCrossOrigin(req: Request, res: Response, message: string): void {
  const path = req.path.toLowerCase();
  if (path === "/graphql") {
    res.status(403).type("application/json").send(JSON.stringify({ errors: [{ message, extensions: { code: "CSRF_PREVENTED" } }] }));
  } else if (path.startsWith("/api/")) {
    res.status(403).type("application/hal+json").send(JSON.stringify({ error: { message, code: "6" } }));
  } else sendJson(res, 403, { message, status: 403 });
}

/** Migrates, wires every feature and opens the listener. */
/** Hooks for embedding the server (benchmarks, diagnostics); the CLI passes none. */
export interface ServerHooks {
  onSqlStatement?: (sql: string) => void;
}

export async function startServer(config: Config, hooks: ServerHooks = {}): Promise<RunningServer> {
  const tls = config.tls && loadTlsFiles(config.tls); // first: a bad pair must not cost a migration
  // A compute serves no pages of its own: the setting is a controller's.
  const webUiRoot = config.webUiDir && config.mode === "controller" ? checkWebUiDir(config.webUiDir) : undefined;
  prepareDataDir(config.dataDir);
  // Before the migration and the features' crash recovery: a second instance on this directory must touch nothing.
  const lock = lockDataDir(config.dataDir);
  return startLocked(config, hooks, tls, webUiRoot, lock.release).catch((e) => {
    lock.release();
    throw e;
  });
}

/** The rest of the start-up, the data directory locked; `unlock` is called last when the server closes. */
async function startLocked(
  config: Config,
  hooks: ServerHooks,
  tls: TlsMaterial | undefined,
  webUiRoot: string | undefined,
  unlock: () => void,
): Promise<RunningServer> {
  await assertPortFree(config.host, config.port);
  const log = createLogger(config.logRequests, config.logFormat);
  const applied = await migrate(config.databaseUrl);
  if (applied.length) log.info("migrated", { applied });

  let close: () => Promise<void> = async () => {};
  // Metrics read the services lazily (at scrape time): the emulation runtime exists once its feature started.
  const metrics = createMetrics(
    () => ctx.services.emulation?.runtime.runningByType() ?? {},
    () => ctx.bus.subscriberCount(),
  );
  const ctx: AppContext = {
    config,
    db: await createDb(config.databaseUrl, hooks.onSqlStatement, (model, operation, seconds) =>
      metrics.db.observe({ model: model ?? "raw", operation }, seconds),
    ),
    bus: countedBus(
      await createBus(config.redisUrl ? { url: config.redisUrl, keyPrefix: redisKeyPrefix(config) } : undefined, (e) => log.warn("redis unreachable", { error: e.message })),
      metrics,
    ),
    log,
    // ops is the composition root's; each feature's start() below fills its own slot
    services: { ops: { metrics } } as FeatureServices,
    // A short grace lets the request that asked receive its answer before connections are cut.
    requestShutdown: () => void setTimeout(() => void close(), 200),
  };
  let stopOptimize = () => {};
  // The composition root: features start in order and stop in reverse order (see Feature), also when the
  // start-up fails half-way (a feature's recovery, the port taken), so that no child process outlives it.
  const started: Feature[] = [];
  const teardown = async () => {
    for (const f of [...started].reverse()) await f.stop(ctx);
    stopOptimize();
    await ctx.bus.close();
    await ctx.db.$disconnect();
    unlock(); // last: the nodes are stopped, nothing of this instance touches the directory any more
  };
  const orTeardown = (e: unknown) => teardown().then(() => Promise.reject(e));
  try {
    for (const f of features) {
      await f.start(ctx);
      started.push(f);
    }
  } catch (e) {
    await orTeardown(e);
  }

  const isAuthorized = basicAuthCheck(config.auth);
  const origins = originPolicy(config.corsOrigins, Boolean(config.tls));
  const app = express();
  app.disable("x-powered-by");
  // Paths are matched as spelled, as GNS3 (aiohttp) does: `/API/…` or `/GraphQL` is a 404, not a second name of a
  // route (and of its metrics label). Set before the first route: the app's router reads it when created.
  app.enable("case sensitive routing");
  app.set("query parser", "simple");
  app.use(requestMetrics(metrics)); // first: every request is timed, 401s and 404s too
  app.use(requestIds(log)); // every answer (401s too) carries the id, every line logged meanwhile has it
  if (config.logRequests) app.use(requestLog(log));
  // Before health and auth: a preflight carries no credentials, and a foreign page gets nothing from any door.
  app.use(origins.http(refuseCrossOrigin));
  mountHealth(app, ctx); // before auth: probes carry no credentials (health.ts says what they reveal)
  // A signed download URL (GraphQL hands them out for /v2 routes) is its own credential for its one path; a bad
  // token is a 403 in the GNS3 error shape.
  app.use("/v2", signedUrlGate(config.urlSecret, (res) => sendJson(res, 403, { message: "Invalid or expired download token", status: 403 })));
  app.use((req, res, next) => {
    if (res.locals.signedUrl || isAuthorized(req)) return next();
    res.status(401).set("WWW-Authenticate", WWW_AUTHENTICATE);
    if (req.path.startsWith("/api/")) {
      res.type("application/hal+json").send(JSON.stringify({ error: { message: "not authorized for that command", code: "6" } }));
    } else res.end();
  });

  // With a Web UI, `/` is the UI (as gns3-server answers it) and the start page moves to /start; /start always works.
  const startPage = landingPage(config, VERSION, webUiRoot ? WEB_UI_ENTRY : undefined);
  app.get("/", webUiRoot ? (_req, res) => res.redirect(302, WEB_UI_ENTRY) : startPage);
  app.get("/start", startPage);
  if (webUiRoot) app.use("/static/web-ui", webUi(webUiRoot));
  // The lab page: a GraphQL client, so only where the GraphQL API is (a compute has none).
  if (config.mode === "controller") app.use("/lab", labPage());
  app.get("/metrics", async (_req, res) => void res.type(METRICS_CONTENT_TYPE).send(await renderMetrics(metrics)));
  app.use(computeModeGuard(config)); // a compute serves only the compute API (and the operator's pages above)
  mountApiDocs(app, features.flatMap((f) => f.api?.(ctx) ?? []), () => routeTable(app), VERSION);
  const graphql = graphqlOnFirstUse("/graphql", async () => {
    const [{ graphqlSchema }, { createGraphQL }, { GRAPHIQL_EXAMPLES }, plugins] = await Promise.all([
      import("./schema.js"),
      import("./platform/graphql/yoga.js"),
      import("./graphiql-examples.js"),
      Promise.all(features.map((f) => f.graphqlPlugins?.(ctx) ?? [])),
    ]);
    return createGraphQL(graphqlSchema(), ctx, plugins.flat(), GRAPHIQL_EXAMPLES);
  });
  app.use(graphql.path, ...graphqlBodyLimit(config.bodyLimit), graphql.http);
  for (const f of features) f.mount(app, ctx);
  app.use((_req, res) => void res.status(404).type("text/plain").send("404: Not Found"));
  app.use(fallbackErrorHandler);

  const server = tls ? https.createServer(tls, app) : http.createServer(app);
  // Idle keep-alive sockets are kept 75 s, as gns3-server (aiohttp) keeps them. With Node's 5 s a client that reuses
  // a pooled socket just as the server gives it up gets ECONNRESET for a request the server never read; after an
  // event-loop pause the expired timers even run before the waiting requests are read.
  server.keepAliveTimeout = 75_000;
  const webSockets = computeModeWebSockets(config, [graphql.wsRoute, ...features.flatMap((f) => f.websockets?.(ctx) ?? [])]);
  // A WebSocket message is a JSON body: held to the same limit.
  const upgrades = createUpgradeHandler(webSockets, { originRefusal: origins.upgradeRefusal, isAuthorized }, log, parseBytes(config.bodyLimit));
  server.on("upgrade", upgrades.handler);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, resolve);
  }).catch(orTeardown);
  // Maintenance and host sweeps: begun once listening, not on the way to the first answer.
  stopOptimize = scheduleOptimize(ctx.db, config.databaseUrl, (e) => log.warn("database optimize failed", { error: String(e) }));
  for (const f of features) f.listening?.(ctx);
  const port = (server.address() as AddressInfo).port;
  config.port = port; // the port actually bound when 0 was asked: the built-in "local" compute reports it
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${config.tls ? "https" : "http"}://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  log.info("listening", { url, database: config.databaseUrl.startsWith("file:") ? "sqlite" : "postgresql" });

  let closing: Promise<void> | undefined;
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  close = () =>
    (closing ??= (async () => {
      const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      upgrades.close();
      server.closeAllConnections(); // keep-alive and streaming sockets would hold close() open
      await listenerClosed;
      await teardown();
      markClosed();
    })());
  return { ctx, port, url, close, closed, routes: () => routeTable(app) };
}
