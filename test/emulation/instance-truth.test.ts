import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findOwnedPids, isAlive } from "../../src/emulation/runtime/processes.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { notificationSocket } from "../support/gns3-ws.js";
import { REDIS_URL, redisUp } from "../support/redis.js";
import { call, gql, nodesOf, onPostgres, spawnCliServer, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 20, "Every node has one owner" and "Truth after faults": instance A (the built CLI, so it can be signalled) runs a vpcs node, instance B
 * shares its PostgreSQL and Redis. After A's SIGTERM, and after A's kill -9 and restart, B's REST list (a read
 * view), REST single node and GraphQL all say `stopped` — they learn it from A's node.updated, not from a poll.
 */
const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);
type Cli = Awaited<ReturnType<typeof spawnCliServer>>;

const exited = (child: ChildProcess) => new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r())));

const runnerOn = async (s: TestServer, pid: string) =>
  (await gql(s.url, `query($p: ID!) { project(id: $p) { runnerId } }`, { p: pid })).data.project.runnerId as string | null;

/** The node's status as B's three read paths tell it. */
async function statusesOnB(b: TestServer, pid: string, nid: string): Promise<string[]> {
  const list = (await call(b.url, "GET", `/v2/projects/${pid}/nodes`)).body as { node_id: string; status: string }[];
  const single = (await call(b.url, "GET", `/v2/projects/${pid}/nodes/${nid}`)).body.status as string;
  const q = await gql(b.url, `query($p: ID!) { project(id: $p) { nodes { edges { node { nodeId status } } } } }`, { p: pid });
  const viaGraphql = (nodesOf(q.data.project.nodes) as { nodeId: string; status: string }[]).find((n) => n.nodeId === nid)!.status.toLowerCase();
  return [list.find((n) => n.node_id === nid)!.status, single, viaGraphql];
}

describe.skipIf(!redisUp || !onPostgres || !hasVpcs)("an instance's nodes after SIGTERM and after kill -9 + restart (PostgreSQL, Redis, vpcs)", () => {
  let a: Cli | undefined;
  let restarted: Cli | undefined; // on A's database and data directory: dropped first, it removes neither
  let b: TestServer | undefined;
  afterEach(async () => {
    await b?.close();
    await restarted?.drop();
    // If the test failed first: A's processes go (one may end by itself meanwhile).
    for (const p of a ? findOwnedPids(path.resolve(a.dataDir)) : []) {
      try {
        process.kill(p, "SIGKILL");
      } catch {}
    }
    await a?.drop();
    a = restarted = b = undefined;
  });

  /** A and B on one database and Redis, a vpcs node started on A, B's views warm with `started`. */
  async function startedOnA() {
    a = await spawnCliServer({ REDIS_URL });
    b = await startTestServer({ redisUrl: REDIS_URL }, { databaseUrl: a.databaseUrl });
    const pid = (await call(a.url, "POST", "/v2/projects", { name: "truth", auto_close: false })).body.project_id as string;
    const nid = (await call(a.url, "POST", `/v2/projects/${pid}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body.node_id as string;
    expect((await call(a.url, "POST", `/v2/projects/${pid}/nodes/${nid}/start`)).status).toBe(200);
    const owner = path.resolve(a.dataDir);
    const pids = await waitFor(() => (findOwnedPids(owner).length ? findOwnedPids(owner) : undefined), 10_000, "the vpcs process");
    const bb = b;
    await waitFor(async () => (await statusesOnB(bb, pid, nid)).every((s) => s === "started"), 5000, "B to read the node started");
    return { a, b, pid, nid, pids };
  }

  it("SIGTERM: the process is gone and B reads `stopped` everywhere as soon as A has exited", async () => {
    const { a, b, pid, nid, pids } = await startedOnA();
    a.child.kill("SIGTERM");
    await exited(a.child);
    expect(a.child.exitCode).toBe(0);
    expect(pids.some(isAlive), "vpcs outlived A").toBe(false);
    expect(await statusesOnB(b, pid, nid)).toEqual(["stopped", "stopped", "stopped"]);
  }, 60_000);

  it("kill -9 then restart on the same data directory: B reads `stopped` everywhere at once and its stream got node.updated", async () => {
    const { a: first, b, pid, nid, pids } = await startedOnA();
    const before = b.ctx.bus.subscriberCount();
    const stream = await notificationSocket(`${b.url.replace(/^http/, "ws")}/v2/projects/${pid}/notifications/ws`);
    try {
      await waitFor(() => b.ctx.bus.subscriberCount() > before, 5000, "B's stream to subscribe");
      first.child.kill("SIGKILL");
      await exited(first.child);
      await waitFor(() => !pids.some(isAlive), 2000, "vpcs to die with A");
      restarted = await spawnCliServer({ REDIS_URL }, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
      await waitFor(async () => (await statusesOnB(b, pid, nid)).every((s) => s === "stopped"), 2000, "B to read the node stopped");
      const { event } = await stream.next("node.updated", (e) => e.node_id === nid && e.status === "stopped");
      expect(event.project_id).toBe(pid);
    } finally {
      stream.close();
    }
  }, 90_000);

  /** The vpcs processes each instance runs (by its data directory's marker). */
  const running = (...instances: { dataDir: string }[]) => instances.map((i) => findOwnedPids(path.resolve(i.dataDir)).length);

  it("one owner: a stop through B reaches the vpcs A runs; a start through B runs it on A again; both starting it at once run one", async () => {
    const { a, b, pid, nid, pids } = await startedOnA();
    const stop = await call(b.url, "POST", `/v2/projects/${pid}/nodes/${nid}/stop`);
    expect(stop.status).toBe(200);
    expect(stop.body.status).toBe("stopped");
    expect(pids.some(isAlive), "the vpcs A ran").toBe(false);
    expect(await statusesOnB(b, pid, nid)).toEqual(["stopped", "stopped", "stopped"]);

    const start = await call(b.url, "POST", `/v2/projects/${pid}/nodes/${nid}/start`);
    expect(start.status).toBe(200);
    expect(start.body.status).toBe("started");
    const vpcsOf = (i: { dataDir: string }) => findOwnedPids(path.resolve(i.dataDir)).filter((p) => commOf(p) === "vpcs").length;
    const oneStart = vpcsOf(a);
    expect(oneStart, "vpcs daemons of one start, on A").toBeGreaterThan(0);
    expect(vpcsOf(b)).toBe(0);

    // Both instances asked to stop, then to start it, at the same moment: one process, on A.
    await Promise.all([call(a.url, "POST", `/v2/projects/${pid}/nodes/${nid}/stop`), call(b.url, "POST", `/v2/projects/${pid}/nodes/${nid}/stop`)]);
    expect(running(a, b)).toEqual([0, 0]);
    const both = await Promise.all([call(a.url, "POST", `/v2/projects/${pid}/nodes/${nid}/start`), call(b.url, "POST", `/v2/projects/${pid}/nodes/${nid}/start`)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect([vpcsOf(a), vpcsOf(b)]).toEqual([oneStart, 0]);
    // The owner is written down, and every instance reads the same one: A (named after its host and data directory).
    const owner = `${os.hostname()}-${createHash("sha256").update(path.resolve(a.dataDir)).digest("hex").slice(0, 8)}`;
    expect(await runnerOn(b, pid)).toBe(owner);
  }, 90_000);

  it("kill -9 of the owner: within 30 s B reads `stopped` everywhere, its stream got node.updated, and a start through B runs the node on B", async () => {
    const { a, b, pid, nid, pids } = await startedOnA();
    const before = b.ctx.bus.subscriberCount();
    const stream = await notificationSocket(`${b.url.replace(/^http/, "ws")}/v2/projects/${pid}/notifications/ws`);
    try {
      await waitFor(() => b.ctx.bus.subscriberCount() > before, 5000, "B's stream to subscribe");
      a.child.kill("SIGKILL");
      await exited(a.child);
      await waitFor(() => !pids.some(isAlive), 2000, "vpcs to die with A");
      const killedAt = Date.now();
      await waitFor(async () => (await statusesOnB(b, pid, nid)).every((s) => s === "stopped"), 30_000, "B to read the node stopped");
      expect(Date.now() - killedAt).toBeLessThan(30_000);
      await stream.next("node.updated", (e) => e.node_id === nid && e.status === "stopped");
    } finally {
      stream.close();
    }
    expect(await runnerOn(b, pid)).toBe(b.ctx.config.instanceId); // B took the project over
    const start = await call(b.url, "POST", `/v2/projects/${pid}/nodes/${nid}/start`);
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    expect(running(a, b)[1]).toBeGreaterThan(0);
    expect(await statusesOnB(b, pid, nid)).toEqual(["started", "started", "started"]);
  }, 90_000);

  it("concurrent writes through both instances: every node created, each console port once, all started on one owner", async () => {
    a = await spawnCliServer({ REDIS_URL });
    b = await startTestServer({ redisUrl: REDIS_URL }, { databaseUrl: a.databaseUrl });
    const [aa, bb] = [a, b];
    const pid = (await call(aa.url, "POST", "/v2/projects", { name: "both", auto_close: false })).body.project_id as string;
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call(i % 2 ? bb.url : aa.url, "POST", `/v2/projects/${pid}/nodes`, { name: `PC${i}`, node_type: "vpcs", compute_id: "local" })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(8).fill(201));
    const ports = created.map((r) => r.body.console as number);
    expect(new Set(ports).size).toBe(8);
    const started = await Promise.all(created.map((r, i) => call(i % 2 ? aa.url : bb.url, "POST", `/v2/projects/${pid}/nodes/${r.body.node_id}/start`)));
    expect(started.map((r) => r.status)).toEqual(Array(8).fill(200));
    const nodes = (await call(bb.url, "GET", `/v2/projects/${pid}/nodes`)).body as { status: string }[];
    expect(nodes.map((n) => n.status)).toEqual(Array(8).fill("started"));
    const [onA, onB] = running(aa, bb);
    expect(onA === 0 || onB === 0, `vpcs processes on A: ${onA}, on B: ${onB}`).toBe(true);
  }, 90_000);
});

function commOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

