import type { Client, InStatement, Transaction, TransactionMode } from "@libsql/client";

/**
 * libsql runs SQLite inside the server process, synchronously: every statement, and every fsync a commit does,
 * blocks the event loop. Two settings of the stock client made that the server's main latency source under load
 * (bench/soak.ts, docs/benchmarks.md "Soak"):
 *
 * - The rollback journal with synchronous=FULL fsyncs several times per commit: 18 ms median, 50 ms p99 on the
 *   test VM, for every autocommit write, with the whole server frozen meanwhile. WAL with synchronous=NORMAL
 *   commits without fsync (the WAL is synced at checkpoints). A committed write survives a crash of the server
 *   (kill -9); only a power loss or kernel crash may roll back the last commits. Deployments that need more
 *   should use PostgreSQL, whose fsyncs happen in another process.
 * - @libsql/client hands its connection to each interactive transaction and opens a fresh one for the next
 *   statement: a new connection (schema parsed again, a new page cache, per-connection PRAGMAs lost) per
 *   transaction, the old one freed only when the garbage collector finds it.
 *
 * Prisma's libsql adapter already serializes every statement behind one mutex, held for a transaction's whole
 * life, so a single connection loses no concurrency: transactions run on it with BEGIN/COMMIT.
 */
export function singleConnection(client: Client): Client {
  const ready = (async () => {
    await client.execute("PRAGMA journal_mode=WAL");
    await client.execute("PRAGMA synchronous=NORMAL");
  })();
  const execute = async (stmt: InStatement) => {
    await ready;
    return client.execute(stmt);
  };
  const transaction = async (mode: TransactionMode = "write"): Promise<Transaction> => {
    await execute(mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    let open = true;
    const end = async (sql: "COMMIT" | "ROLLBACK") => {
      if (!open) return;
      open = false;
      try {
        await client.execute(sql);
      } catch (e) {
        // SQLite may already have rolled the transaction back on its own (e.g. after SQLITE_FULL).
        if (sql === "COMMIT" || !/no transaction is active/i.test(String(e))) throw e;
      }
    };
    return {
      execute: (stmt: InStatement) => client.execute(stmt),
      batch: async (stmts: InStatement[]) => {
        const results = [];
        for (const stmt of stmts) results.push(await client.execute(stmt));
        return results;
      },
      executeMultiple: (sql: string) => client.executeMultiple(sql),
      commit: () => end("COMMIT"),
      rollback: () => end("ROLLBACK"),
      close: () => void end("ROLLBACK"),
      get closed() {
        return !open;
      },
    } as Transaction;
  };
  return {
    execute,
    transaction,
    batch: async (stmts, mode) => (await ready, client.batch(stmts, mode)),
    migrate: async (stmts) => (await ready, client.migrate(stmts)),
    executeMultiple: async (sql) => (await ready, client.executeMultiple(sql)),
    sync: () => client.sync(),
    reconnect: () => client.reconnect(),
    close: () => client.close(),
    get closed() {
      return client.closed;
    },
    protocol: client.protocol,
  };
}
