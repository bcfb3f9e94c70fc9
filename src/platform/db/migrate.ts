import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { packagePath } from "../core/package-root.js";
import { isPostgresUrl } from "./client.js";

/**
 * Applies pending migrations before the server serves, without the Prisma CLI (a devDependency that needs a
 * schema engine). Bookkeeping uses Prisma's own `_prisma_migrations` table and checksums, so
 * `prisma migrate status/deploy` agree with what ran here.
 */

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

function migrationsFor(provider: "sqlite" | "postgresql"): Migration[] {
  const dir = packagePath("prisma", provider, "migrations");
  return fs
    .readdirSync(dir)
    .filter((d) => /^\d/.test(d))
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/** The names of the migrations this build brings for the database of `url` (the readiness check compares). */
export const expectedMigrations = (url: string): string[] => migrationsFor(isPostgresUrl(url) ? "postgresql" : "sqlite").map((m) => m.name);

/** Migrations recorded as applied (and not rolled back). */
export const APPLIED_MIGRATIONS_SQL = `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;

const BOOKKEEPING = {
  sqlite: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL,
    "finished_at" DATETIME, "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
    "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`,
  postgresql: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" ("id" VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ, "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT,
    "rolled_back_at" TIMESTAMPTZ, "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`,
};

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
const record = (m: Migration) =>
  `INSERT INTO "_prisma_migrations" ("id","checksum","finished_at","migration_name","applied_steps_count") ` +
  `VALUES (${quote(randomUUID())}, ${quote(m.checksum)}, CURRENT_TIMESTAMP, ${quote(m.name)}, 1);`;

export async function migrate(url: string): Promise<string[]> {
  return isPostgresUrl(url) ? migratePostgres(url) : migrateSqlite(url);
}

// Each driver is imported only for the database in use (see createDb).
async function migrateSqlite(url: string): Promise<string[]> {
  const { PrismaLibSql } = await import("@prisma/adapter-libsql");
  const conn = await new PrismaLibSql({ url }).connect();
  try {
    await conn.executeScript(BOOKKEEPING.sqlite);
    const rows = await conn.queryRaw({
      sql: APPLIED_MIGRATIONS_SQL,
      args: [],
      argTypes: [],
    });
    const done = new Set(rows.rows.map((r) => String(r[0])));
    const applied: string[] = [];
    for (const m of migrationsFor("sqlite").filter((m) => !done.has(m.name))) {
      await conn.executeScript(`BEGIN;\n${m.sql}\n${record(m)}\nCOMMIT;`);
      applied.push(m.name);
    }
    return applied;
  } finally {
    await conn.dispose();
  }
}

async function migratePostgres(url: string): Promise<string[]> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Several instances may start against one database at once: one migrates, the others wait.
    await client.query("SELECT pg_advisory_lock(72616361)");
    await client.query(BOOKKEEPING.postgresql);
    const { rows } = await client.query<{ migration_name: string }>(APPLIED_MIGRATIONS_SQL);
    const done = new Set(rows.map((r) => r.migration_name));
    const applied: string[] = [];
    for (const m of migrationsFor("postgresql").filter((m) => !done.has(m.name))) {
      await client.query(`BEGIN;\n${m.sql}\n${record(m)}\nCOMMIT;`);
      applied.push(m.name);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock(72616361)").catch(() => {});
    await client.end();
  }
}
