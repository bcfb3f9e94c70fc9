import path from "node:path";
import { describe, expect, it } from "vitest";
import { redisKeyPrefix } from "../../src/platform/redis-namespace.js";

/** What makes two instances one deployment (they agree on their Redis keys) and two deployments differ. */
describe("the Redis key prefix of a deployment", () => {
  const prefix = (databaseUrl: string, redisNamespace?: string) => redisKeyPrefix({ databaseUrl, redisNamespace });

  it("is derived from the database's location, not from how an instance logs in to it", () => {
    expect(prefix("postgres://a:secret@DB.example:5432/lab")).toMatch(/^patchbay:[0-9a-f]{12}:$/);
    expect(prefix("postgres://a:secret@DB.example:5432/lab")).toBe(prefix("postgresql://b:other@db.example/lab?sslmode=require"));
    expect(prefix("file:./data/patchbay.db")).toBe(prefix(`file:${path.resolve("data/patchbay.db")}?connection_limit=1`));
  });

  it("differs between databases: name, host, port, schema, SQLite file", () => {
    const all = [
      "postgres://u@db:5432/lab",
      "postgres://u@db:5432/lab2",
      "postgres://u@db2:5432/lab",
      "postgres://u@db:5433/lab",
      "postgres://u@db:5432/lab?schema=staging",
      "file:/srv/a/patchbay.db",
      "file:/srv/b/patchbay.db",
    ].map((url) => prefix(url));
    expect(new Set(all).size).toBe(all.length);
  });

  it("is the configured namespace when one is set", () => {
    expect(prefix("postgres://u@db:5432/lab", "prod")).toBe("patchbay:prod:");
  });
});
