import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import type { PrismaLibSql as LibSqlFactory } from "@prisma/adapter-libsql";
import type { PrismaClient as SqliteClient } from "../../generated/prisma-sqlite/client.js";
import { InvalidInputError, RecordGoneError, UniqueViolationError } from "../core/errors.js";
import { containsNul } from "../core/text.js";

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

async function sqliteAdapter(url: string) {
  const [{ PrismaLibSql }, { singleConnection }] = await Promise.all([import("@prisma/adapter-libsql"), import("./sqlite-connection.js")]);
  class LibSqlAdapterFactory extends PrismaLibSql {
    override createClient(config: Parameters<LibSqlFactory["createClient"]>[0]) {
      return singleConnection(super.createClient(config));
    }

    override async connect() {
      const adapter = await super.connect();
      const info = adapter.getConnectionInfo?.() ?? { supportsRelationJoins: false };
      adapter.getConnectionInfo = () => ({ ...info, maxBindValues: SQLITE_MAX_VARIABLES });
      return adapter;
    }
  }
  return new LibSqlAdapterFactory({ url });
}

export function sqliteFile(url: string): string {
  return path.resolve(url.replace(/^file:/, "").split("?")[0]);
}

/**
 * Prisma's defaults (2 s to get a connection, 5 s to finish) turn a burst of concurrent writes into failed
 * transactions — and a committed write whose follow-up job failed. Under load a transaction waits instead.
 */
const TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 30_000 };

/** Called once per Prisma operation with its duration (metrics); model is undefined for raw queries. */
export type OperationObserver = (model: string | undefined, operation: string, seconds: number) => void;

/**
 * Prisma compiles queries to plans in WebAssembly (the query compiler, ~1.7 MB of code). V8 first compiles it with
 * its baseline compiler (Liftoff), then recompiles hot functions with TurboFan on worker threads; those very large
 * functions need tens of MB of compiler memory that glibc keeps in the worker threads' malloc arenas afterwards
 * (~70 MB of idle RSS, and CPU taken from start-up on a 2-core machine). Plans are cached per query shape, so the
 * compiler runs only for a shape's first query, where Liftoff code was measured as fast or faster (no competing
 * background compilation): the query compiler stays on Liftoff. Process-wide, set before the module is compiled;
 * Prisma's is the only WebAssembly the server runs. See docs/benchmarks.md, "Memory and start".
 */
const baselineWasmOnly = () => v8.setFlagsFromString("--liftoff-only");

/**
 * `onStatement` (for benchmarks and diagnostics) is called once per SQL statement the client sends, with its text;
 * `onOperation` once per Prisma operation, with its duration.
 *
 * Only the client and driver of the database in use are loaded (imported here, by the URL's scheme): each
 * generated client with its adapter and driver costs start-up time and memory the other database never needs.
 */
export async function createDb(url: string, onStatement?: (sql: string) => void, onOperation?: OperationObserver): Promise<Db> {
  const log = onStatement ? [{ emit: "event" as const, level: "query" as const }] : [];
  baselineWasmOnly();
  let db: Db;
  if (isPostgresUrl(url)) {
    const [{ PrismaClient }, { PrismaPg }] = await Promise.all([
      import("../../generated/prisma-postgresql/client.js"),
      import("@prisma/adapter-pg"),
    ]);
    db = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }), log, transactionOptions: TRANSACTION_OPTIONS }) as unknown as Db;
  } else {
    fs.mkdirSync(path.dirname(sqliteFile(url)), { recursive: true });
    const { PrismaClient } = await import("../../generated/prisma-sqlite/client.js");
    db = new PrismaClient({ adapter: await sqliteAdapter(url), log, transactionOptions: TRANSACTION_OPTIONS });
  }
  if (onStatement) db.$on("query" as never, ((e: { query: string }) => onStatement(e.query)) as never);
  return withClientErrors(db, onOperation);
}

/** "QuotaRule" → "quota rule", "Svm" → "svm": the object a unique constraint protects, in words. */
const modelWords = (model: unknown) => (typeof model === "string" ? model.replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase() : "object");

/**
 * Database errors that are the client's doing, mapped once for every query and every API face:
 * - a unique constraint is a conflict: a P2002 becomes a UniqueViolationError (409 in every adapter, a failed job
 *   with a clear message) instead of an internal error;
 * - a write to a row a concurrent request deleted (P2025) is a RecordGoneError (404), not an internal error;
 * - NUL in any text is refused up front (PostgreSQL rejects it with an internal error, SQLite cuts the text).
 */
function withClientErrors(db: Db, observe?: OperationObserver): Db {
  return db.$extends({
    query: {
      async $allOperations({ model, operation, args, query }) {
        if (containsNul(args)) throw new InvalidInputError("Text must not contain NUL characters.");
        const started = observe ? performance.now() : 0;
        try {
          return await query(args);
        } catch (e) {
          const err = e as { code?: string; meta?: { modelName?: unknown } };
          if (err?.code === "P2002") throw new UniqueViolationError(`Duplicate entry: the ${modelWords(err.meta?.modelName)} already exists.`);
          if (err?.code === "P2025") throw new RecordGoneError(`The ${modelWords(err.meta?.modelName)} no longer exists.`);
          throw e;
        } finally {
          observe?.(model, operation, (performance.now() - started) / 1000);
        }
      },
    },
  }) as unknown as Db;
}
