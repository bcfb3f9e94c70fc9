import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GNS3_VERSION } from "../../src/emulation/core/version.js";
import { call, freshDatabaseUrl, startTestServer, type TestServer } from "../support/server.js";
import { pause, waitFor } from "../support/wait.js";

const NOTIFICATIONS = "/v2/compute/notifications/ws";

/** A remote compute that only answers the monitor's capability polls, and records every request it gets. */
async function fakeCompute() {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? "");
    if (req.url !== "/v2/compute/capabilities") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ version: GNS3_VERSION, node_types: ["vpcs"], platform: "linux" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { requests, port: (server.address() as AddressInfo).port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("composition root: each feature's start() runs before serving, its stop() on close", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-root-"));
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn();
  });

  it("a restarted server watches its stored computes without any request, and stops polling them on close", async () => {
    const compute = await fakeCompute();
    cleanup.push(compute.close);
    const db = await freshDatabaseUrl(dataDir);
    cleanup.push(db.drop);
    const shared = { databaseUrl: db.url, dataDir };

    const first: TestServer = await startTestServer({}, shared);
    const created = await call(first.url, "POST", "/v2/computes", { compute_id: "fake", protocol: "http", host: "127.0.0.1", port: compute.port });
    expect(created.status).toBe(201);
    await waitFor(async () => (await call(first.url, "GET", "/v2/computes/fake")).body.connected === true, 10_000, "the compute connected");
    // A connected compute gets the placement's notification socket; once it has arrived, nothing the first
    // server sent is still on its way to the fake compute when the second server's requests are counted.
    await waitFor(() => compute.requests.includes(NOTIFICATIONS), 10_000, "the first server's notification socket");
    await first.close();

    compute.requests.length = 0;
    const second = await startTestServer({}, shared);
    // Nothing asked the second server anything: its emulation feature's start() built the monitor.
    await waitFor(() => compute.requests.includes("/v2/compute/capabilities"), 10_000, "a poll of the stored compute");
    // Close after the whole first poll cycle (capabilities, statistics, then the socket a connected compute
    // gets) has reached the fake compute: a request sent before close but still in flight is not a poll after it.
    await waitFor(() => ["/v2/compute/statistics", NOTIFICATIONS].every((r) => compute.requests.includes(r)), 10_000, "the first poll cycle");
    await second.close();

    const polled = compute.requests.length;
    await pause(2_500); // longer than the 2 s poll cadence of a connected compute: a stopped monitor stays silent
    expect(compute.requests.length).toBe(polled);
  }, 40_000);

  it("a start-up that fails (the port is taken) stops what the features had started", async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanup.push(() => new Promise<void>((r) => taken.close(() => r())));
    const db = await freshDatabaseUrl(fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-root-")));
    cleanup.push(db.drop);
    // The runtime holds a process "exit" handler (it kills its children if the server dies) from start() to stop().
    const exitHandlers = process.listenerCount("exit");
    const port = (taken.address() as AddressInfo).port;
    await expect(startTestServer({ host: "127.0.0.1", port }, { databaseUrl: db.url })).rejects.toThrow(/EADDRINUSE/);
    expect(process.listenerCount("exit")).toBe(exitHandlers);
  });

  it("a server holds its data directory from its start to close(); a start that fails gives it back", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-root-"));
    const db = await freshDatabaseUrl(dataDir);
    cleanup.push(db.drop);
    const store = { databaseUrl: db.url, dataDir };
    const first = await startTestServer({}, store);
    // Two servers of one process conflict as two processes do (the lock belongs to the open file, not the process).
    await expect(startTestServer({}, store)).rejects.toThrow(`data directory ${dataDir} is in use by another Patchbay (pid ${process.pid} on ${os.hostname()})`);
    await first.close();
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanup.push(() => new Promise<void>((r) => taken.close(() => r())));
    await expect(startTestServer({ host: "127.0.0.1", port: (taken.address() as AddressInfo).port }, store)).rejects.toThrow(/EADDRINUSE/);
    const again = await startTestServer({}, store);
    await again.close();
  });
});
