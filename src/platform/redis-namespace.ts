import { createHash } from "node:crypto";
import type { Config } from "./config.js";
import { isPostgresUrl, sqliteFile } from "./db/client.js";

/**
 * Every Redis key Patchbay uses starts with `patchbay:<namespace>:`, so that two deployments on one Redis never see
 * each other's events. Unset, the namespace is derived from the database's identity, never its credentials: the
 * instances of one deployment share their database, so they agree; two deployments have two databases, so they
 * differ. Instances that name one database differently (an alias or an address of its host) must set the same
 * PATCHBAY_REDIS_NAMESPACE.
 */
export function redisKeyPrefix(config: Pick<Config, "redisNamespace" | "databaseUrl">): string {
  const namespace = config.redisNamespace ?? createHash("sha256").update(databaseIdentity(config.databaseUrl)).digest("hex").slice(0, 12);
  return `patchbay:${namespace}:`;
}

/** SQLite: the file's absolute path. PostgreSQL: host:port/database (the user's name when none is given, as libpq). */
export function databaseIdentity(databaseUrl: string): string {
  if (!isPostgresUrl(databaseUrl)) return `sqlite:${sqliteFile(databaseUrl)}`;
  const u = new URL(databaseUrl);
  const database = decodeURIComponent(u.pathname.slice(1) || u.username);
  const schema = u.searchParams.get("schema"); // Prisma's: two deployments may share a database in two schemas
  return `postgresql://${u.hostname.toLowerCase()}:${u.port || 5432}/${database}${schema ? `?schema=${schema}` : ""}`;
}
