import { spawn } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import os from "node:os";
import path from "node:path";
import { freeTcpPort } from "../../src/emulation/runtime/vpcs.js";
import type { Config } from "../../src/platform/config.js";
import type { RunningServer } from "../../src/server.js";
import { loadConfig, startServer } from "./bundle.js";
import { CLI } from "./cli.js";
import { createPostgresDatabase } from "./databases.js";
import { waitFor } from "./wait.js";

/**
 * Tests run against the real server, as built for production (the bundle: ./bundle.ts), on an ephemeral port with a
 * fresh database: SQLite by default, or a fresh PostgreSQL database on the server named by TEST_DATABASE_URL (e.g.
 * postgres://postgres@127.0.0.1:5432/postgres).
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

/**
 * Port windows. Every server a test starts gets its own console (TCP) and UDP port window, so files running in
 * parallel never hand out the same port: each vitest worker (VITEST_POOL_ID 1..maxWorkers, one file at a time)
 * owns a slot of SLOT_SIZE ports, and the servers of a file take consecutive windows inside it. The kernel
 * checks of the allocators only see ports already bound, not ports another server has just chosen, hence the
 * split. Windows lie below Linux's ephemeral range (32768+): an outgoing connection (fetch, database, telnet)
 * never takes a port a node is about to bind, and a probe of a port nobody listens on yet cannot connect to
 * itself. The first window of a worker is random so that two vitest runs on one host rarely meet.
 */
const PORT_WINDOWS = { from: 8000, slots: 8, slotSize: 3000, console: 100, udp: 500 } as const;
const windowsPerSlot = Math.floor(PORT_WINDOWS.slotSize / (PORT_WINDOWS.console + PORT_WINDOWS.udp));
let nextWindow = Math.floor(Math.random() * windowsPerSlot);

export function portWindow(): Pick<Config, "consolePorts" | "udpPorts"> {
  const slot = (Number(process.env.VITEST_POOL_ID ?? 1) - 1) % PORT_WINDOWS.slots;
  const base = PORT_WINDOWS.from + slot * PORT_WINDOWS.slotSize + (nextWindow++ % windowsPerSlot) * (PORT_WINDOWS.console + PORT_WINDOWS.udp);
  const udp = base + PORT_WINDOWS.console;
  return { consolePorts: [base, udp - 1], udpPorts: [udp, udp + PORT_WINDOWS.udp - 1] };
}

/**
 * The built CLI as a process of its own (so a test can kill it with -9, or give it its own PATH) on a fresh
 * database and data directory, or on `shared` ones (a restart), once it answers. `drop` kills it and removes what
 * it created.
 */
export async function spawnCliServer(env: Record<string, string> = {}, shared?: { databaseUrl: string; dataDir: string }) {
  const dataDir = shared?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-cli-"));
  const db = shared ? { url: shared.databaseUrl, drop: async () => {} } : await freshDatabaseUrl(dataDir);
  const port = await freeTcpPort();
  const { consolePorts, udpPorts } = portWindow();
  const child = spawn(process.execPath, CLI, {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_URL: db.url,
      PATCHBAY_DATA_DIR: dataDir,
      PATCHBAY_LOG: "off",
      REDIS_URL: "",
      PATCHBAY_CONSOLE_PORTS: consolePorts.join("-"),
      PATCHBAY_UDP_PORTS: udpPorts.join("-"),
      ...env,
    },
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await call(url, "GET", "/v2/version").catch(() => undefined))?.status === 200, 30_000, "the server to listen");
  const drop = async () => {
    child.kill("SIGKILL");
    await db.drop();
    if (!shared) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { url, dataDir, databaseUrl: db.url, child, drop };
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
    instanceId: `test-${path.basename(dataDir)}`,
    databaseUrl: db.url,
    logRequests: false,
    redisUrl: undefined,
    ...portWindow(),
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

/**
 * Resolves once the server's event bus has more subscribers than `before` (read it before subscribing): the
 * subscription just opened is live, and events published from now on reach it. Instead of sleeping "long
 * enough for the subscription to attach".
 */
export async function busSubscribed(s: RunningServer, before: number): Promise<void> {
  await waitFor(() => s.ctx.bus.subscriberCount() > before, 10_000, "a new event-bus subscriber");
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

/** The elements of a connection's page (`edges { node }`). */
export const nodesOf = (connection: { edges: { node: any }[] }) => connection.edges.map((e) => e.node);

type Page = { edges: { node: any }[]; pageInfo: { hasNextPage: boolean; endCursor?: string | null } };
/** Every element of a connection, page after page: `page(after)` reads one (with `pageInfo { hasNextPage endCursor }`). */
export async function allPages(page: (after: string | undefined) => Promise<Page>): Promise<any[]> {
  const all: any[] = [];
  for (let after: string | undefined; ; ) {
    const p = await page(after);
    all.push(...nodesOf(p));
    if (!p.pageInfo.hasNextPage) return all;
    after = p.pageInfo.endCursor ?? undefined;
  }
}

/** A graphql-ws client of the server's /graphql (lazy: it connects on its first subscription). */
export const graphqlWsClient = (s: { url: string }) =>
  createClient({ url: `${s.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, lazy: true });

/** One server for the enclosing describe and a graphql-ws client of it; `take` gets both before the tests run. */
export function serverWithGraphqlClient(take: (server: TestServer, client: Client) => void): void {
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startTestServer();
    client = graphqlWsClient(server);
    take(server, client);
  });
  afterAll(async () => {
    await client.dispose();
    await server.close();
  });
}
