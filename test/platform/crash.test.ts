import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/platform/db/client.js";
import { findOwnedPids, isAlive } from "../../src/emulation/runtime/processes.js";
import { findVpcs, freeTcpPort } from "../../src/emulation/runtime/vpcs.js";
import { call, freshDatabaseUrl } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { CLI, runCli } from "../support/cli.js";
import { consoleAnswers } from "../support/lab.js";
import { postBytes, topology, zip } from "../emulation/archive-support.js";

/**
 * kill -9 under write load (issue 8, "Done when"): the real server runs as a child process; quota rules are created
 * and changed with quota on, a volume's quota is toggled and resized, a vpcs node runs; the process is killed mid-load
 * and restarted on the same database and data directory. Then: every acknowledged write is there, no job is left
 * queued or running, enforcement equals the committed rules wherever quota is on, no volume is stuck resizing, and
 * the vpcs process of the killed server is gone.
 */
const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);
const ROOT = path.resolve(import.meta.dirname, "../..");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(probe: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Server {
  child: ChildProcess;
  url: string;
  output: string[];
}

async function launch(env: Record<string, string>): Promise<Server> {
  const port = await freeTcpPort();
  const child = spawn(process.execPath, CLI, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1", PATCHBAY_LOG: "off" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout!.on("data", (d) => output.push(String(d)));
  child.stderr!.on("data", (d) => output.push(String(d)));
  const url = `http://127.0.0.1:${port}`;
  await until(async () => child.exitCode === null && (await call(url, "GET", "/api/cluster")).status === 200, 30_000, `the server to listen (${output.join("")})`);
  return { child, url, output };
}

const exited = (child: ChildProcess) => new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r())));

describe.skipIf(!hasVpcs)("kill -9 under write load, then restart (requires the vpcs package)", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("loses no acknowledged write and leaves nothing stuck or orphaned", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-crash-"));
    const db = await freshDatabaseUrl(dataDir);
    cleanups.push(db.drop);
    const lo = 31000 + Math.floor(Math.random() * 30) * 100;
    const env = {
      DATABASE_URL: db.url,
      PATCHBAY_DATA_DIR: dataDir,
      PATCHBAY_CONSOLE_PORTS: `${lo}-${lo + 99}`,
      PATCHBAY_UDP_PORTS: `${lo + 10000}-${lo + 10099}`,
    };
    let server = await launch(env);
    cleanups.push(async () => {
      server.child.kill("SIGTERM");
      await exited(server.child);
    });
    const api = (method: string, url: string, body?: unknown) => call(server.url, method, url, body);

    // ---- setup: two volumes with rules, quota on for vol1; a started vpcs node
    expect((await api("POST", "/api/svm/svms?return_timeout=5", { name: "svm1" })).status).toBe(201);
    for (const name of ["vol1", "vol2"]) expect((await api("POST", "/api/storage/volumes?return_timeout=5", { name, svm: { name: "svm1" } })).status).toBe(201);
    const volumes = (await api("GET", "/api/storage/volumes?fields=name")).body.records as { uuid: string; name: string }[];
    const vol = Object.fromEntries(volumes.map((v) => [v.name, v.uuid]));
    for (const v of ["vol1", "vol2"]) {
      expect((await api("POST", "/api/storage/quota/rules?return_timeout=30", { svm: { name: "svm1" }, volume: { name: v }, type: "user", users: [{ name: "seed" }] })).status).toBe(201);
    }
    expect((await api("PATCH", `/api/storage/volumes/${vol.vol1}?return_timeout=30`, { quota: { enabled: true } })).status).toBe(200);

    const project = (await api("POST", "/v2/projects", { name: "crash-lab" })).body.project_id as string;
    const node = (await api("POST", `/v2/projects/${project}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body.node_id as string;
    expect((await api("POST", `/v2/projects/${project}/nodes/${node}/start`)).status).toBe(200);
    const owner = path.resolve(dataDir);
    cleanups.push(() => findOwnedPids(owner).forEach((pid) => process.kill(pid, "SIGKILL"))); // if the test fails before recovery
    const vpcsPids = await until(async () => findOwnedPids(owner).length > 0 && findOwnedPids(owner), 10_000, "the vpcs process");

    // ---- write load: every acknowledged write is recorded
    const ackedRules = new Map<string, { sent: bigint[]; acked: number }>();
    const jobs = new Set<string>();
    let acks = 0;
    let crashed = false;
    let killed: () => void;
    const kill = new Promise<void>((r) => (killed = r));
    // Killed right as a 202 arrives once the load is up: that job (answered before it ran) is most likely unfinished.
    const noteJob = (r: { status: number; body: any }) => {
      if (r.body?.job?.uuid) jobs.add(r.body.job.uuid);
      if (r.status === 202 && acks >= 60 && !crashed) {
        server.child.kill("SIGKILL");
        crashed = true;
        killed();
      }
    };

    async function ruleWorker(w: number) {
      for (let i = 0; !crashed; i++) {
        const volume = i % 3 === 2 ? "vol2" : "vol1";
        const limit = BigInt(1024 * (1 + w * 1000 + i));
        const wait = i % 2 ? 30 : 0;
        const r = await api("POST", `/api/storage/quota/rules?return_timeout=${wait}`, {
          svm: { name: "svm1" }, volume: { name: volume }, type: "user", users: [{ name: `w${w}-${i}` }], space: { hard_limit: Number(limit) },
        }).catch(() => undefined);
        if (!r) return;
        expect([201, 202], r.text).toContain(r.status);
        noteJob(r);
        const uuid = r.headers.get("location")!.split("/").pop()!;
        const rule = { sent: [limit], acked: 0 };
        ackedRules.set(uuid, rule);
        acks++;
        // Change it once or twice, in order (one worker owns the rule): the last acknowledged value must survive.
        for (let k = 1; k <= 1 + (i % 2) && !crashed; k++) {
          const next = limit + BigInt(k * 1024);
          rule.sent.push(next);
          const p = await api("PATCH", `/api/storage/quota/rules/${uuid}?return_timeout=${wait}`, { space: { hard_limit: Number(next) } }).catch(() => undefined);
          if (!p) return;
          expect([200, 202], p.text).toContain(p.status);
          noteJob(p);
          rule.acked = rule.sent.length - 1;
          acks++;
        }
      }
    }
    async function volumeWorker() {
      for (let i = 0; !crashed; i++) {
        const body = i % 3 === 2 ? { size: (100 + i) * 1024 * 1024 } : { quota: { enabled: i % 3 === 0 } };
        const r = await api("PATCH", `/api/storage/volumes/${vol.vol2}?return_timeout=${i % 2 ? 30 : 0}`, body).catch(() => undefined);
        if (!r) return;
        expect([200, 202], r.text).toContain(r.status);
        noteJob(r);
        acks++;
      }
    }
    const load = Promise.all([...Array.from({ length: 10 }, (_, w) => ruleWorker(w)), volumeWorker(), volumeWorker()]);
    await Promise.race([
      kill,
      load.then(() => Promise.reject(new Error("the load ended before the kill"))), // a worker's failed expectation
      sleep(30_000).then(() => Promise.reject(new Error(`no kill after ${acks} writes`))),
    ]);
    await exited(server.child);
    await load;
    // No orphan vpcs: it daemonizes, but inside a sandbox the kernel kills with the server.
    await until(async () => !vpcsPids.some(isAlive), 2000, `vpcs ${vpcsPids} to die with the server`);
    expect(findOwnedPids(owner)).toEqual([]);

    // ---- restart on the same database and data directory
    server = await launch(env);
    // The runtime's crash recovery reset the node.
    expect((await api("GET", `/v2/projects/${project}/nodes/${node}`)).body.status).toBe("stopped");

    // Every acknowledged write is there (a later, unacknowledged change may have committed too).
    expect(ackedRules.size).toBeGreaterThan(10);
    for (const [uuid, rule] of ackedRules) {
      const r = await api("GET", `/api/storage/quota/rules/${uuid}?fields=space`);
      expect(r.status, `rule ${uuid}`).toBe(200);
      expect(rule.sent.slice(rule.acked).map(Number), `rule ${uuid}`).toContain(r.body.space.hard_limit);
    }

    // No job left queued or running: those the clients saw, and every job in the database.
    for (const uuid of jobs) expect(["success", "failure"], uuid).toContain((await api("GET", `/api/cluster/jobs/${uuid}`)).body.state);
    const direct = await createDb(db.url);
    cleanups.push(() => direct.$disconnect());
    expect(await direct.job.count({ where: { state: { in: ["queued", "running"] } } })).toBe(0);

    // No volume stuck; wherever quota is on, the reports are exactly the committed rules.
    const key = (x: any) => JSON.stringify([x.type, (x.users ?? []).map((u: any) => u.name ?? u.id), x.space?.hard_limit ?? null]);
    for (const v of ["vol1", "vol2"]) {
      const quota = (await api("GET", `/api/storage/volumes/${vol[v]}?fields=quota`)).body.quota;
      expect(quota.state, v).toBe(quota.enabled ? "on" : "off");
      const reports = (await api("GET", `/api/storage/quota/reports?volume.uuid=${vol[v]}&fields=type,users,space&max_records=10000`)).body.records as any[];
      if (!quota.enabled) {
        expect(reports, v).toEqual([]);
        continue;
      }
      const rules = (await api("GET", `/api/storage/quota/rules?volume.uuid=${vol[v]}&fields=type,users,space&max_records=10000`)).body.records as any[];
      expect(reports.map(key).sort(), v).toEqual(rules.map(key).sort());
    }
  }, 90_000);
});

/**
 * Issue 20: a data directory is locked by the instance that uses it. A second instance on it refuses to start in one
 * line instead of running the crash recovery that would kill the first one's nodes; the kernel drops the lock with
 * its holder, so after a kill -9 the next start takes the directory and recovers it.
 */
describe.skipIf(!hasVpcs)("a second instance on a data directory in use (requires the vpcs package)", () => {
  it("is refused with one line naming the directory and the holder; the holder's node runs on; after kill -9 a restart recovers", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-lock-"));
    const db = await freshDatabaseUrl(dataDir);
    const lo = 31000 + Math.floor(Math.random() * 30) * 100;
    const env = { DATABASE_URL: db.url, PATCHBAY_DATA_DIR: dataDir, PATCHBAY_CONSOLE_PORTS: `${lo}-${lo + 99}`, PATCHBAY_UDP_PORTS: `${lo + 10000}-${lo + 10099}` };
    let server = await launch(env);
    const owner = path.resolve(dataDir);
    try {
      const api = (method: string, url: string) => call(server.url, method, url);
      const project = (await call(server.url, "POST", "/v2/projects", { name: "locked-lab" })).body.project_id as string;
      const made = (await call(server.url, "POST", `/v2/projects/${project}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body;
      const node = `/v2/projects/${project}/nodes/${made.node_id}`;
      expect((await api("POST", `${node}/start`)).status).toBe(200);
      const pids = await until(async () => findOwnedPids(owner).length > 0 && findOwnedPids(owner), 10_000, "the vpcs process");

      const second = await runCli(env, [], ROOT);
      expect(second.stderr.trim()).toBe(
        `patchbay: data directory ${dataDir} is in use by another Patchbay (pid ${server.child.pid} on ${os.hostname()}): stop that one, or give this one its own PATCHBAY_DATA_DIR or --data-dir`,
      );
      expect(second.code).toBe(1);
      expect(pids.every(isAlive), "the holder's vpcs still runs").toBe(true);
      expect(await consoleAnswers(made.console)).toBe(true);
      expect((await api("GET", node)).body.status).toBe("started");

      server.child.kill("SIGKILL");
      await exited(server.child);
      await until(async () => !pids.some(isAlive), 2000, `vpcs ${pids} to die with the server`);
      server = await launch(env);
      expect((await api("GET", node)).body.status).toBe("stopped");
      expect((await api("POST", `${node}/start`)).body.status).toBe("started");
    } finally {
      server.child.kill("SIGTERM");
      await exited(server.child);
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

/**
 * Issue 19 point 11: what a kill -9 interrupts mid-write is removed at the next start — an image upload's
 * temporary file, an import's staging directory, the QMP sockets of VMs that died with the server — and only
 * those (files of the same directories under other names stay).
 */
describe("kill -9 mid-upload and mid-import, then restart on the same data directory", () => {
  it("removes the interrupted writes' leftovers at start-up, and nothing else", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-crash-"));
    const db = await freshDatabaseUrl(dataDir);
    const env = { DATABASE_URL: db.url, PATCHBAY_DATA_DIR: dataDir };
    const images = path.join(dataDir, "images", "QEMU");
    const projects = path.join(dataDir, "projects");
    let server = await launch(env);
    try {
      // An upload that never ends: its temporary file is there, growing, when the server is killed.
      const body = new ReadableStream({
        async pull(c) {
          await sleep(20);
          c.enqueue(new Uint8Array(64 * 1024));
        },
      });
      void fetch(`${server.url}/v2/compute/qemu/images/disk.qcow2`, { method: "POST", body, duplex: "half" } as RequestInit).catch(() => undefined);
      await until(async () => fs.readdirSync(images).some((f) => /^\.disk\.qcow2\.[0-9a-f]{8}\.tmp$/.test(f)), 10_000, "the upload's temporary file");

      // An import killed while it extracts: SIGKILL as soon as its staging directory appears.
      fs.mkdirSync(projects, { recursive: true });
      const files: Record<string, string> = { "project.gns3": JSON.stringify(topology("crashed import")) };
      for (let i = 0; i < 3000; i++) files[`project-files/f${i}.txt`] = "x".repeat(4096);
      const archive = await zip(files);
      const watcher = fs.watch(projects, (_event, name) => {
        if (name?.startsWith(".import-")) server.child.kill("SIGKILL");
      });
      const imported = await postBytes(server.url, `/v2/projects/${randomUUID()}/import`, archive).catch(() => undefined);
      watcher.close();
      await exited(server.child);
      expect(imported, "the server died during the import").toBeUndefined();
      expect(fs.readdirSync(projects).filter((f) => f.startsWith(".import-"))).toHaveLength(1);

      // A VM's QMP socket as a killed server leaves it, and files of our directories that are not ours to remove.
      const runDir = path.join(dataDir, "run");
      fs.mkdirSync(runDir, { recursive: true });
      fs.writeFileSync(path.join(runDir, `${randomUUID()}.qmp`), ""); // the layout before socket directories
      const socketDir = path.join(runDir, randomUUID());
      fs.mkdirSync(socketDir);
      fs.writeFileSync(path.join(socketDir, "qmp.sock"), "");
      // An archive upload and a snapshot restore as a kill -9 leaves them.
      fs.mkdirSync(path.join(projects, ".upload-Ab12Cd"));
      fs.writeFileSync(path.join(projects, ".upload-Ab12Cd", "archive.zip"), "x");
      fs.mkdirSync(path.join(projects, `${randomUUID()}.restore-xY34zW`));
      const kept = [path.join(images, "notes.tmp"), path.join(images, ".disk.qcow2.tmp"), path.join(projects, ".import-kept-by-someone")];
      for (const f of kept) fs.writeFileSync(f, "");

      server = await launch(env);
      expect(fs.readdirSync(images).filter((f) => f.endsWith(".tmp")).sort()).toEqual([".disk.qcow2.tmp", "notes.tmp"]);
      expect(fs.readdirSync(projects).filter((f) => f.startsWith("."))).toEqual([".import-kept-by-someone"]);
      expect(fs.readdirSync(projects).filter((f) => f.includes(".restore-"))).toEqual([]);
      // The host's leftovers (the QMP socket) go once the server listens; a VM's start waits for that.
      await until(async () => fs.readdirSync(runDir).length === 0, 5000, "the run directory's leftovers to go");
    } finally {
      server.child.kill("SIGKILL");
      await exited(server.child);
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
