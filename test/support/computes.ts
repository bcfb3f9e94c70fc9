import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import type { Config } from "../../src/platform/config.js";
import { call, freshDatabaseUrl, portWindow, startTestServer, type TestServer } from "./server.js";
import { waitFor } from "./wait.js";

/**
 * Two Patchbay instances on loopback: a controller on 127.0.0.1 and a compute (PATCHBAY_MODE=compute) on
 * 127.0.0.2, each with its own data directory, database and port ranges (on two real hosts the ranges could be
 * the same; here vpcs binds the wildcard address, so they must not overlap).
 */
export const CONTROLLER_HOST = "127.0.0.1";
export const COMPUTE_HOST = "127.0.0.2";

/** A compute instance that can be stopped and started again on the same port, data directory and database. */
export async function computeInstance(overrides: Partial<Config> = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-compute-"));
  const db = await freshDatabaseUrl(dataDir);
  const r = portWindow(); // kept across restarts
  const start = (port = 0) => startTestServer({ mode: "compute", host: COMPUTE_HOST, port, ...r, ...overrides }, { databaseUrl: db.url, dataDir });
  return { start, drop: db.drop, ranges: r };
}

export async function registerCompute(ctl: TestServer, computeId: string, port: number) {
  const r = await call(ctl.url, "POST", "/v2/computes", { compute_id: computeId, protocol: "http", host: COMPUTE_HOST, port });
  expect(r.status).toBe(201);
  await waitFor(async () => (await call(ctl.url, "GET", `/v2/computes/${computeId}`)).body.connected === true, 10_000);
}

/**
 * The usual two-host setup: a controller on 127.0.0.1 and a compute instance on 127.0.0.2 registered as `hostb`.
 * `close` stops both and removes the compute's database.
 */
export async function twoHosts(controller: Partial<Config> = {}, computeOverrides: Partial<Config> = {}) {
  const ctl = await startTestServer({ host: CONTROLLER_HOST, ...controller });
  const compute = await computeInstance(computeOverrides);
  const cmp = await compute.start();
  await registerCompute(ctl, "hostb", cmp.port);
  const close = async () => {
    await ctl.close();
    await cmp.close();
    await compute.drop();
  };
  return { ctl, cmp, compute, close };
}
