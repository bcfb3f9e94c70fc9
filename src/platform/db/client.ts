import fs from "node:fs";
import path from "node:path";
import { PrismaLibSql } from "@prisma/adapter-libsql";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as PostgresClient } from "../../generated/prisma-postgresql/client.js";
import { PrismaClient as SqliteClient } from "../../generated/prisma-sqlite/client.js";

/** Both clients are generated from the same models; the SQLite one serves as the static type. */
export type Db = SqliteClient;
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/**
 * The libsql adapter reports no bind-parameter limit, so Prisma assumes SQLite's historical 999 and refuses
 * relation loads past it (a project of 1,000 nodes could not be read with its links). libsql is built on
 * SQLite ≥ 3.32, whose limit is 32766: declare it.
 */
const SQLITE_MAX_VARIABLES = 32766;

class LibSqlAdapterFactory extends PrismaLibSql {
  override async connect() {
    const adapter = await super.connect();
    const info = adapter.getConnectionInfo?.() ?? { supportsRelationJoins: false };
    adapter.getConnectionInfo = () => ({ ...info, maxBindValues: SQLITE_MAX_VARIABLES });
    return adapter;
  }
}

export function sqliteFile(url: string): string {
  return path.resolve(url.replace(/^file:/, "").split("?")[0]);
}

/** `onStatement` (for benchmarks and diagnostics) is called once per SQL statement the client sends. */
export function createDb(url: string, onStatement?: () => void): Db {
  const log = onStatement ? [{ emit: "event" as const, level: "query" as const }] : [];
  let db: Db;
  if (isPostgresUrl(url)) {
    db = new PostgresClient({ adapter: new PrismaPg({ connectionString: url }), log }) as unknown as Db;
  } else {
    fs.mkdirSync(path.dirname(sqliteFile(url)), { recursive: true });
    db = new SqliteClient({ adapter: new LibSqlAdapterFactory({ url }), log });
  }
  if (onStatement) db.$on("query" as never, onStatement);
  return db;
}
