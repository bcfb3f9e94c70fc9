import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig, type Config } from "../../src/platform/config.js";
import { startServer, type RunningServer } from "../../src/server.js";
import { createPostgresDatabase } from "./databases.js";

/**
 * Tests run against the real server on an ephemeral port with a fresh database: SQLite by default, or a fresh
 * PostgreSQL database on the server named by TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).
 */
export interface TestServer extends RunningServer {
  dataDir: string;
  databaseUrl: string;
}

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

export async function freshDatabaseUrl(dataDir: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) return { url: `file:${path.join(dataDir, "test.db")}`, drop: async () => {} };
  return createPostgresDatabase(admin, "patchbay_test");
}

export async function startTestServer(
  overrides: Partial<Config> = {},
  shared?: { databaseUrl: string; dataDir?: string },
): Promise<TestServer> {
  const dataDir = shared?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-test-"));
  const db = shared ? { url: shared.databaseUrl, drop: async () => {} } : await freshDatabaseUrl(dataDir);
  const config: Config = {
    ...loadConfig([], {}),
    port: 0,
    dataDir,
    databaseUrl: db.url,
    logRequests: false,
    redisUrl: undefined,
    ...overrides,
  };
  const server = await startServer(config);
  return {
    ...server,
    dataDir,
    databaseUrl: db.url,
    close: async () => {
      await server.close();
      await db.drop();
    },
  };
}

/** A small fetch wrapper: JSON in, parsed JSON (or text) out. */
export async function call(
  base: string,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers; text: string }> {
  const res = await fetch(base + url, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers, text };
}

/** POST a GraphQL operation; returns `data` and `errors`. */
export async function gql(base: string, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: any; errors?: { message: string }[] };
}
