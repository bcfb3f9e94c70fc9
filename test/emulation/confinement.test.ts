import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOnPath } from "../../src/platform/core/executables.js";
import { findOwnedPids } from "../../src/emulation/runtime/processes.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { guestProperties, processesMentioning, qemuInstalled, testGuest } from "../support/qemu-guest.js";
import { call, spawnCliServer, type TestServer, startTestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * The confinement itself (issue 19, points 2, 3 and 11), black-box through the real server with real processes:
 * with the QEMU option allow-list switched off (the test-only switch), options that make QEMU open or create host
 * files do not reach them; a VM cannot map more than its limit; vpcs dies with a server killed by SIGKILL; and
 * without bwrap a node is refused, never run unconfined.
 */
const tools = toolAvailable("qemu-system-x86_64, qemu-img, vpcs and bwrap", qemuInstalled() && findVpcs() !== null && findOnPath("bwrap") !== null);

async function vpcsNode(url: string) {
  const p = await call(url, "POST", "/v2/projects", { name: `confine-${randomUUID().slice(0, 8)}` });
  const P = `/v2/projects/${p.body.project_id}`;
  const n = await call(url, "POST", `${P}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });
  expect(n.status, JSON.stringify(n.body)).toBe(201);
  return { P, id: n.body.node_id as string };
}

const comm = (pid: number) => fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();

describe.skipIf(!tools)("confinement of node processes (requires qemu-system-x86_64, qemu-img, vpcs and bwrap)", () => {
  let server: TestServer;
  let P: string;
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-host-"));
  const victim = path.join(outside, "victim.img");

  beforeAll(async () => {
    const guest = testGuest();
    server = await startTestServer();
    for (const [name, file] of Object.entries({ vmlinuz: guest.kernel, "initrd.gz": guest.initrd })) {
      const r = await fetch(`${server.url}/v2/computes/local/qemu/images/${name}`, { method: "POST", body: fs.readFileSync(file) });
      expect(r.status).toBeLessThan(300);
    }
    P = `/v2/projects/${(await call(server.url, "POST", "/v2/projects", { name: "confinement" })).body.project_id}`;
    fs.writeFileSync(victim, Buffer.alloc(1 << 20, 7));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    fs.rmSync(outside, { recursive: true, force: true });
  });

  /** A VM whose options are stored as given (no allow-list: written past the API) and started with the checks off. */
  async function startWithOptions(options: string) {
    const n = await call(server.url, "POST", `${P}/nodes`, { name: `VM-${randomUUID().slice(0, 6)}`, node_type: "qemu", compute_id: "local", properties: guestProperties("vm", "10.0.0.1/24") });
    expect(n.status, JSON.stringify(n.body)).toBe(201);
    const id = n.body.node_id as string;
    const row = await server.ctx.db.node.findUniqueOrThrow({ where: { id } });
    await server.ctx.db.node.update({ where: { id }, data: { propertiesJson: JSON.stringify({ ...JSON.parse(row.propertiesJson), options }) } });
    const saved = { NODE_ENV: process.env.NODE_ENV, unchecked: process.env.PATCHBAY_TEST_UNCHECKED_QEMU_OPTIONS };
    process.env.NODE_ENV = "test";
    process.env.PATCHBAY_TEST_UNCHECKED_QEMU_OPTIONS = "1";
    try {
      const start = await call(server.url, "POST", `${P}/nodes/${id}/start`);
      return { id, start };
    } finally {
      process.env.NODE_ENV = saved.NODE_ENV;
      if (saved.unchecked === undefined) delete process.env.PATCHBAY_TEST_UNCHECKED_QEMU_OPTIONS;
      else process.env.PATCHBAY_TEST_UNCHECKED_QEMU_OPTIONS = saved.unchecked;
    }
  }

  async function stop(id: string) {
    await call(server.url, "POST", `${P}/nodes/${id}/stop`);
    await waitFor(() => processesMentioning([id]).length === 0, 5000, "the VM gone");
  }

  it("with the allow-list off, options naming host files do not reach them; the same option works inside the node directory", async () => {
    const before = { victim: fs.readFileSync(victim), entries: fs.readdirSync(outside).sort() };
    const cases: [string, string][] = [
      [`-icount shift=auto,rr=record,rrfile=${outside}/created-by-rr`, `${outside}/created-by-rr`],
      [`-drive file=${victim},format=raw,if=virtio`, victim],
      [`-drive file=/etc/hostname,format=raw,if=virtio,readonly=on`, "/etc/hostname"],
      [`-device loader,file=${victim},addr=0x100000`, victim],
    ];
    for (const [options, file] of cases) {
      const { id, start } = await startWithOptions(options);
      // QEMU refuses because the file does not exist in its view (it would open or create it outside).
      expect(start.status, `${options}: ${JSON.stringify(start.body)}`).toBe(409);
      expect(start.body.message, options).toContain(file);
      expect(start.body.message, options).toMatch(/No such file or directory|[Cc]ould not (open|load)/);
      expect(start.body.message, options).not.toMatch(/Permission denied/);
      expect(processesMentioning([id])).toEqual([]);
    }
    expect(fs.readdirSync(outside).sort()).toEqual(before.entries);
    expect(fs.readFileSync(victim).equals(before.victim)).toBe(true);

    // The control: the option itself works, with a file in the node directory (relative: QEMU runs there).
    const { id, start } = await startWithOptions("-icount shift=auto,rr=record,rrfile=replay.bin");
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    expect(fs.existsSync(path.join(start.body.node_directory, "replay.bin"))).toBe(true);
    const status = fs.readFileSync(`/proc/${processesMentioning([id])[0]}/status`, "utf8");
    expect(status).toMatch(/^Uid:\s+65534\s/m); // an unprivileged user
    expect(status).toMatch(/^CapEff:\s+0+$/m); // no capabilities
    await stop(id);
  }, 90_000);

  it("a VM cannot map more than its RAM and QEMU's measured overhead: a 64 GB memory backend is refused at start", async () => {
    const { id, start } = await startWithOptions("-object memory-backend-ram,id=big,size=64G,prealloc=on");
    expect(start.status, JSON.stringify(start.body)).toBe(409);
    expect(start.body.message).toMatch(/Cannot allocate memory|cannot set up guest memory/);
    expect(processesMentioning([id])).toEqual([]);
  }, 60_000);
});

describe.skipIf(!tools)("vpcs confined: it dies with its server, and never runs without bwrap (requires vpcs and bwrap)", () => {
  it("kill -9 of the server: its vpcs processes are gone within two seconds", async () => {
    const s = await spawnCliServer();
    try {
      const { P, id } = await vpcsNode(s.url);
      expect((await call(s.url, "POST", `${P}/nodes/${id}/start`)).body.status).toBe("started");
      const vpcs = findOwnedPids(s.dataDir, id).filter((p) => comm(p) === "vpcs");
      expect(vpcs.length).toBeGreaterThanOrEqual(1);
      s.child.kill("SIGKILL");
      await waitFor(() => findOwnedPids(s.dataDir).length === 0, 2000, "no process of the killed server");
    } finally {
      await s.drop();
    }
  }, 60_000);

  it("without bwrap in PATH, starting a vpcs answers 409 naming it, and nothing runs", async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-nobwrap-"));
    for (const tool of ["vpcs", "prlimit", "setpriv", "nice"]) fs.symlinkSync(findOnPath(tool)!, path.join(bin, tool));
    const s = await spawnCliServer({ PATH: bin });
    try {
      const { P, id } = await vpcsNode(s.url);
      const r = await call(s.url, "POST", `${P}/nodes/${id}/start`);
      expect(r.status).toBe(409);
      expect(r.body.message).toMatch(/bwrap is not installed .*bubblewrap/);
      expect(findOwnedPids(s.dataDir)).toEqual([]);
    } finally {
      await s.drop();
      fs.rmSync(bin, { recursive: true, force: true });
    }
  }, 60_000);
});
