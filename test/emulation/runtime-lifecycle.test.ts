import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findOwnedPids, isAlive } from "../../src/emulation/runtime/processes.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { call, freshDatabaseUrl, portWindow, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);

/** A project with PC1 and PC2 on a hub (created through the REST API). */
async function hubLab(s: TestServer, name: string, linkNow = true) {
  const p = await call(s.url, "POST", "/v2/projects", { name });
  expect(p.status).toBe(201);
  const P = `/v2/projects/${p.body.project_id}`;
  const ids: Record<string, string> = {};
  for (const [n, type] of [["PC1", "vpcs"], ["PC2", "vpcs"], ["HUB1", "ethernet_hub"]]) {
    ids[n] = (await call(s.url, "POST", `${P}/nodes`, { name: n, node_type: type, compute_id: "local" })).body.node_id;
  }
  const link = async () => {
    for (const [pc, port] of [["PC1", 0], ["PC2", 1]] as const) {
      const r = await call(s.url, "POST", `${P}/links`, {
        nodes: [
          { node_id: ids[pc], adapter_number: 0, port_number: 0 },
          { node_id: ids.HUB1, adapter_number: 0, port_number: port },
        ],
      });
      expect(r.status).toBe(201);
    }
  };
  if (linkNow) await link();
  return { P, projectId: p.body.project_id as string, ids, link };
}

async function pingBetween(s: TestServer, P: string, ids: Record<string, string>) {
  const c1 = await TelnetClient.connect((await call(s.url, "GET", `${P}/nodes/${ids.PC1}`)).body.console);
  const c2 = await TelnetClient.connect((await call(s.url, "GET", `${P}/nodes/${ids.PC2}`)).body.console);
  try {
    // The first console session of a fresh PC gets its banner and first prompt: nothing else may connect before
    // it (the server's readiness probe once did, and under load swallowed them: a prompt timeout here).
    await c1.waitFor(/Welcome to Virtual PC Simulator[\s\S]*VPCS> $/);
    await c2.waitFor(/Welcome to Virtual PC Simulator[\s\S]*VPCS> $/);
    await c1.run("ip 10.1.0.1/24");
    await c2.run("ip 10.1.0.2/24");
    const out = await c1.run("ping 10.1.0.2 -c 3", 20_000);
    return { out, replies: out.match(/10\.1\.0\.2 icmp_seq=\d ttl=64/g)?.length ?? 0 };
  } finally {
    c1.close();
    c2.close();
  }
}

describe.skipIf(!hasVpcs)("runtime lifecycle with projects (requires the vpcs package)", () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close().catch(() => {});
  });

  it("links created after the PCs started are wired too; a hub floods between them", async () => {
    const s = await startTestServer();
    servers.push(s);
    const { P, ids, link } = await hubLab(s, "late-links", false);
    expect((await call(s.url, "POST", `${P}/nodes/start`)).status).toBe(204);
    await link();
    await waitFor(() => s.ctx.services.emulation.runtime.snapshot().links.length === 2);
    // The first echo may be lost to ARP resolution on a freshly started PC; the others must come back.
    const ping = await pingBetween(s, P, ids);
    expect(ping.replies, ping.out).toBeGreaterThanOrEqual(2);
  }, 40_000);

  it("closing a project stops its processes and marks them stopped; re-opening rewires its links; deleting frees everything", async () => {
    const s = await startTestServer();
    servers.push(s);
    const compute = s.ctx.services.emulation.runtime;
    const { P, ids } = await hubLab(s, "close-me");
    await call(s.url, "POST", `${P}/nodes/start`);
    const pids = compute.snapshot().processes.flatMap((p) => p.pids);
    expect(pids.length).toBeGreaterThanOrEqual(2);

    // GNS3 answers the close once the nodes are stopped: no waiting after it.
    expect((await call(s.url, "POST", `${P}/close`)).status).toBe(204);
    expect(pids.filter(isAlive)).toEqual([]);
    expect((await s.ctx.db.node.findUnique({ where: { id: ids.PC1 } }))!.status).toBe("stopped");
    expect(compute.snapshot().links).toEqual([]);
    expect(compute.snapshot().udpPorts).toEqual([]);

    expect((await call(s.url, "POST", `${P}/open`)).status).toBe(201);
    await waitFor(() => compute.snapshot().links.length === 2);
    expect((await call(s.url, "GET", `${P}/nodes/${ids.PC1}`)).body.status).toBe("stopped");
    await call(s.url, "POST", `${P}/nodes/start`);
    const ping = await pingBetween(s, P, ids);
    expect(ping.replies, ping.out).toBeGreaterThanOrEqual(2);

    expect((await call(s.url, "DELETE", P)).status).toBe(204);
    await waitFor(() => compute.snapshot().attachments.length === 0);
    expect(compute.snapshot().processes).toEqual([]);
    expect(compute.snapshot().links).toEqual([]);
    expect(compute.snapshot().udpPorts).toEqual([]);
    expect(findOwnedPids(compute.owner)).toEqual([]);
  }, 60_000);

  it("a capture on a link between two PCs stops by itself when neither end runs any more", async () => {
    const s = await startTestServer();
    servers.push(s);
    const p = await call(s.url, "POST", "/v2/projects", { name: "direct" });
    const P = `/v2/projects/${p.body.project_id}`;
    const a = (await call(s.url, "POST", `${P}/nodes`, { name: "A", node_type: "vpcs", compute_id: "local" })).body.node_id;
    const b = (await call(s.url, "POST", `${P}/nodes`, { name: "B", node_type: "vpcs", compute_id: "local" })).body.node_id;
    const l = await call(s.url, "POST", `${P}/links`, {
      nodes: [
        { node_id: a, adapter_number: 0, port_number: 0 },
        { node_id: b, adapter_number: 0, port_number: 0 },
      ],
    });
    const L = `${P}/links/${l.body.link_id}`;
    await call(s.url, "POST", `${P}/nodes/start`);
    const c = await call(s.url, "POST", `${L}/start_capture`, { capture_file_name: "ab.pcap" });
    expect(c.status).toBe(201);
    expect(c.body.capture_file_name).toBe("ab.pcap");
    await call(s.url, "POST", `${P}/nodes/${a}/stop`);
    expect((await call(s.url, "GET", L)).body.capturing).toBe(true);
    await call(s.url, "POST", `${P}/nodes/${b}/stop`);
    const after = (await call(s.url, "GET", L)).body;
    expect(after).toMatchObject({ capturing: false, capture_compute_id: null, capture_file_name: "ab.pcap" });
    expect((await call(s.url, "GET", `${L}/pcap`)).status).toBe(409);
    const escape = await call(s.url, "POST", `${P}/nodes/start`);
    expect(escape.status).toBe(204);
    expect((await call(s.url, "POST", `${L}/start_capture`, { capture_file_name: "../../escape.pcap" })).status).toBe(403);
  }, 30_000);

  it("a vpcs without a console (console_type none) still runs", async () => {
    const s = await startTestServer();
    servers.push(s);
    const p = await call(s.url, "POST", "/v2/projects", { name: "headless" });
    const P = `/v2/projects/${p.body.project_id}`;
    const n = await call(s.url, "POST", `${P}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local", console_type: "none" });
    expect(n.body.console).toBeNull();
    const r = await call(s.url, "POST", `${P}/nodes/${n.body.node_id}/start`);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("started");
    const pids = s.ctx.services.emulation.runtime.snapshot().processes[0].pids;
    expect(pids.every(isAlive)).toBe(true);
    expect((await call(s.url, "POST", `${P}/nodes/${n.body.node_id}/stop`)).body.status).toBe("stopped");
    expect(pids.some(isAlive)).toBe(false);
  }, 20_000);

  it("after a crash, the next start-up kills the leftover vpcs processes and marks their nodes stopped", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-crash-"));
    const db = await freshDatabaseUrl(dataDir);
    const ranges = portWindow(); // the restarted server keeps its predecessor's ports
    const first = await startTestServer(ranges, { databaseUrl: db.url, dataDir });
    const { P, ids } = await hubLab(first, "crashy");
    await call(first.url, "POST", `${P}/nodes/start`);
    const compute = first.ctx.services.emulation.runtime;
    const pids = compute.snapshot().processes.flatMap((p) => p.pids);
    expect(pids.length).toBeGreaterThanOrEqual(2);
    expect(fs.readdirSync(path.join(dataDir, "run")).length).toBe(2);
    // Simulate a crash: the server goes away without stopping its children.
    compute.stop = async () => {};
    await first.close();
    expect(pids.every(isAlive)).toBe(true);

    const second = await startTestServer(ranges, { databaseUrl: db.url, dataDir });
    servers.push(second);
    const c2 = second.ctx.services.emulation.runtime;
    let swept = false;
    void c2.ready.then(() => (swept = true));
    // The leftovers are swept once the server listens: the database says stopped already, and a start asked
    // meanwhile waits for the sweep, so the sweep cannot kill the new process nor the start reuse a leftover's ports.
    expect((await call(second.url, "GET", `${P}/nodes/${ids.PC1}`)).body.status).toBe("stopped");
    expect(swept).toBe(false);
    const started = call(second.url, "POST", `${P}/nodes/${ids.PC1}/start`);
    await c2.ready;
    for (const p of pids) expect(isAlive(p), `pid ${p}`).toBe(false);
    expect((await started).body.status).toBe("started");
    expect(c2.snapshot().links).toHaveLength(2);
    const fresh = c2.snapshot().processes.flatMap((p) => p.pids);
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.every(isAlive)).toBe(true);
    expect(fs.readdirSync(path.join(dataDir, "run"))).toHaveLength(1); // the new process's pid file only
    await second.close();
    servers.pop();
    expect(findOwnedPids(c2.owner)).toEqual([]);
    await db.drop();
  }, 60_000);
});
