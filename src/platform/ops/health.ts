import type { Express } from "express";
import type { AppContext } from "../context.js";
import { APPLIED_MIGRATIONS_SQL, expectedMigrations } from "../db/migrate.js";
import { probeWritable } from "./data-dir.js";

/**
 * GET /health: the process answers (liveness). GET /health/ready: it can serve — database reachable, every
 * migration of this build applied, Redis reachable when configured, data directory writable. Both answer
 * without credentials (probes rarely carry them) and so say only which check failed; the reason goes to the log.
 */
const CHECK_TIMEOUT_MS = 3000;

type Check = () => Promise<void>;

function withTimeout(check: Check): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)));
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer));
}

async function pingRedis(url: string): Promise<void> {
  // A connection of its own: the bus's reconnects forever, and must not be the one a probe waits on.
  const { Redis } = await import("ioredis"); // only where Redis is configured
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: CHECK_TIMEOUT_MS, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  redis.on("error", () => {}); // reported by the failed ping
  try {
    await redis.connect();
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}

function checks(ctx: AppContext): Record<string, Check | undefined> {
  const { config, db } = ctx;
  return {
    database: async () => void (await db.$queryRawUnsafe("SELECT 1")),
    migrations: async () => {
      const applied = new Set((await db.$queryRawUnsafe<{ migration_name: string }[]>(APPLIED_MIGRATIONS_SQL)).map((r) => r.migration_name));
      const missing = expectedMigrations(config.databaseUrl).filter((m) => !applied.has(m));
      if (missing.length) throw new Error(`not applied: ${missing.join(", ")}`);
    },
    redis: config.redisUrl ? () => pingRedis(config.redisUrl!) : undefined,
    dataDir: async () => probeWritable(config.dataDir),
  };
}

export function mountHealth(app: Express, ctx: AppContext): void {
  app.get("/health", (_req, res) => void res.json({ status: "ok" }));
  app.get("/health/ready", async (_req, res) => {
    const results: Record<string, string> = {};
    await Promise.all(
      Object.entries(checks(ctx)).map(async ([name, check]) => {
        if (!check) return void (results[name] = "not configured");
        try {
          await withTimeout(check);
          results[name] = "ok";
        } catch (error) {
          results[name] = "failing";
          ctx.log.warn("readiness check failed", { check: name, error: String((error as Error)?.message ?? error) });
        }
      }),
    );
    const ready = !Object.values(results).includes("failing");
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not ready", checks: results });
  });
}
