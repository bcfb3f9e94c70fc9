import net from "node:net";
import { afterAll, beforeAll } from "vitest";
import type { Config } from "../../src/platform/config.js";
import { startTestServer, type TestServer } from "./server.js";

/** The Redis the multi-instance tests share (CI requires it: PATCHBAY_TEST_REQUIRE_REDIS). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export const redisUp = await new Promise<boolean>((resolve) => {
  const u = new URL(REDIS_URL);
  const sock = net.connect(Number(u.port || 6379), u.hostname, () => (sock.end(), resolve(true)));
  sock.on("error", () => resolve(false));
});
if (!redisUp && process.env.PATCHBAY_TEST_REQUIRE_REDIS) throw new Error(`Redis is required but not reachable at ${REDIS_URL}`);

/**
 * Two instances sharing one database and Redis, for the enclosing describe. Each has its own data directory, as
 * the README's recipe says: a data directory is locked by the instance that uses it. `overrides` configure both.
 */
export function useInstancePair(overrides: Partial<Config> = {}): { a: TestServer; b: TestServer } {
  const pair = {} as { a: TestServer; b: TestServer };
  beforeAll(async () => {
    pair.a = await startTestServer({ ...overrides, redisUrl: REDIS_URL });
    pair.b = await startTestServer({ ...overrides, redisUrl: REDIS_URL }, { databaseUrl: pair.a.databaseUrl });
  });
  afterAll(async () => {
    await pair.b.close();
    await pair.a.close();
  });
  return pair;
}
