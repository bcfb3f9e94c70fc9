import type { Db } from "./client.js";
import { isPostgresUrl } from "./client.js";

/**
 * SQLite gathers no planner statistics by itself: without them it filters 100,000 quota rules through the
 * `type` index and sorts, instead of walking the key (≈10× slower, see docs/benchmarks.md). The libsql build's
 * `PRAGMA optimize` skips tables that were never analyzed, so run a plain ANALYZE (milliseconds at these sizes)
 * once the server listens and hourly. PostgreSQL's autovacuum does the same on its own.
 */
export const OPTIMIZE_INTERVAL_MS = 60 * 60 * 1000;

export async function optimizeDatabase(db: Db, url: string): Promise<void> {
  if (isPostgresUrl(url)) return;
  await db.$executeRawUnsafe("ANALYZE");
}

/** Runs optimizeDatabase now and then hourly; returns the stop function. */
export function scheduleOptimize(db: Db, url: string, onError: (e: unknown) => void): () => void {
  const run = () => void optimizeDatabase(db, url).catch(onError);
  run();
  const timer = setInterval(run, OPTIMIZE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
