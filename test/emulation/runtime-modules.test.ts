import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EthernetHub, EthernetSwitch } from "../../src/emulation/runtime/ethernet.js";
import { LinkTunnel } from "../../src/emulation/runtime/link-tunnel.js";
import { parsePcap, PcapWriter } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { bind, UdpPortPool } from "../../src/emulation/runtime/udp-port-pool.js";
import { findOwnedPids, recoverLeftovers } from "../../src/emulation/runtime/processes.js";
import { findVpcs, tcpPortIsFree, VPCS_UDP_OFFSETS, VpcsProcess } from "../../src/emulation/runtime/vpcs.js";
import { spawnDetached } from "../../src/emulation/runtime/spawner.js";
import { findOnPath } from "../../src/platform/core/executables.js";
import { portWindow } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { pause, waitFor } from "../support/wait.js";

const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);
// This file's own port window (test/support/server.ts): UDP for the pool (the squatter test takes base+400..405),
// TCP for the consoles of the PCs it starts.
const window = portWindow();
const base = window.udpPorts[0];
const pool = new UdpPortPool(base, base + 399);
let nextConsole = window.consolePorts[0];
/** The next console port of this file's window that nothing listens on (another test run may share the host). */
async function consolePortFromWindow(): Promise<number> {
  while (!(await tcpPortIsFree(nextConsole))) nextConsole++;
  return nextConsole++;
}

async function udpPortIsFree(port: number): Promise<boolean> {
  const s = dgram.createSocket("udp4");
  try {
    await bind(s, port, "0.0.0.0");
    return true;
  } catch {
    return false;
  } finally {
    try {
      s.close();
    } catch {}
  }
}

/** A UDP endpoint standing in for a node port: receives on `local`, sends to `remote`. */
async function endpoint(local: number, remote: number) {
  const s = dgram.createSocket("udp4");
  await bind(s, local, "127.0.0.1");
  const got: Buffer[] = [];
  s.on("message", (m) => got.push(m));
  return { got, send: (b: Buffer) => s.send(b, remote, "127.0.0.1"), close: () => s.close() };
}

const mac = (n: number) => Buffer.from([0x02, 0, 0, 0, 0, n]);
const frame = (dst: Buffer, src: Buffer, payload = "hello", tag?: number) => {
  const parts = [dst, src];
  if (tag !== undefined) parts.push(Buffer.from([0x81, 0x00, (tag >> 8) & 0x0f, tag & 0xff]));
  parts.push(Buffer.from([0x08, 0x00]), Buffer.from(payload));
  return Buffer.concat(parts);
};
const BROADCAST = Buffer.alloc(6, 0xff);
/** Frames travel through real sockets: wait until the receivers hold `n` frames in all. */
const delivered = (n: number, ...eps: { got: Buffer[] }[]) => waitFor(() => eps.reduce((sum, e) => sum + e.got.length, 0) >= n, 2000, `${n} frames`);
/** For frames that must NOT arrive: long enough for a frame sent on loopback to have come through. */
const quiet = () => pause(80);

describe("udp port pool", () => {
  it("hands out distinct ports, skips ports taken by others, and takes them back", async () => {
    const p = new UdpPortPool(base + 400, base + 405);
    const squatter = dgram.createSocket("udp4");
    await bind(squatter, base + 401, "0.0.0.0");
    const a = await p.allocate();
    const b = await p.allocate();
    expect(a).toBe(base + 400);
    expect(b).toBe(base + 402); // 401 is held by another socket
    const pair = await p.allocate([0, 2]); // a port with another two above it, as vpcs binds base and base+9
    expect(pair).toBe(base + 403);
    expect(await p.allocate()).toBe(base + 404); // between the pair's ports: free
    await expect(p.allocate()).rejects.toThrow(/No free UDP port/);
    p.release(a);
    expect(await p.allocate()).toBe(a);
    p.release(pair, [0, 2]);
    p.release(base + 404);
    p.release(a);
    p.release(b);
    expect(p.inUse).toEqual([]);
    squatter.close();
  });
});

describe.skipIf(!toolAvailable("perl", findOnPath("perl") !== null))("spawn helper (spawner.ts)", () => {
  it("starts processes in a session of their own, in their directory, with exactly their environment and their output in the log, and answers each exit code", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pb-spawner-"));
    try {
      const log = path.join(dir, "out.log");
      const script = 'echo "$PWD $MARK $HOME sid=$(ps -o sid= -p $$ | tr -d " ") pid=$$"; echo err >&2; exit 7';
      const runs = await Promise.all(Array.from({ length: 20 }, () => spawnDetached(["/bin/sh", "-c", script], { cwd: dir, env: { MARK: "m 1", PATH: "/usr/bin:/bin" }, log })));
      expect(new Set(runs.map((r) => r.pid)).size).toBe(20);
      expect(await Promise.all(runs.map((r) => r.exited))).toEqual(Array(20).fill(7));
      const lines = fs.readFileSync(log, "utf8").trim().split("\n");
      expect(lines.filter((l) => l === "err")).toHaveLength(20);
      for (const r of runs) expect(lines).toContain(`${dir} m 1  sid=${r.pid} pid=${r.pid}`);
      // A program that cannot be executed ends at once with 127, as a shell reports it.
      const missing = await spawnDetached([path.join(dir, "nothing-here")], { cwd: dir, env: {}, log });
      expect(await missing.exited).toBe(127);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("ethernet hub and switch (real UDP)", () => {
  it("hub floods every frame to every other port", async () => {
    const hub = new EthernetHub();
    const eps = [];
    for (let i = 0; i < 3; i++) {
      const [local, remote] = [await pool.allocate(), await pool.allocate()];
      await hub.addNio(i, { local, remote });
      eps.push(await endpoint(remote, local));
    }
    eps[0].send(frame(mac(2), mac(1)));
    await delivered(2, eps[1], eps[2]);
    expect(eps[0].got).toHaveLength(0);
    expect(eps[1].got).toHaveLength(1);
    expect(eps[2].got).toHaveLength(1);
    await hub.close();
    eps.forEach((e) => e.close());
  });

  it("switch learns MACs, isolates access VLANs and tags on dot1q trunks", async () => {
    const sw = new EthernetSwitch([
      { port_number: 0, type: "access", vlan: 10 },
      { port_number: 1, type: "access", vlan: 10 },
      { port_number: 2, type: "access", vlan: 20 },
      { port_number: 3, type: "dot1q", vlan: 1 },
    ]);
    const eps = [];
    for (let i = 0; i < 4; i++) {
      const [local, remote] = [await pool.allocate(), await pool.allocate()];
      await sw.addNio(i, { local, remote });
      eps.push(await endpoint(remote, local));
    }
    // broadcast from port 0 (VLAN 10): port 1 untagged, trunk tagged 10, port 2 (VLAN 20) nothing
    eps[0].send(frame(BROADCAST, mac(1)));
    await delivered(2, eps[1], eps[3]);
    expect(eps[1].got).toHaveLength(1);
    expect(eps[2].got).toHaveLength(0);
    expect(eps[3].got).toHaveLength(1);
    expect(eps[3].got[0].readUInt16BE(12)).toBe(0x8100);
    expect(eps[3].got[0].readUInt16BE(14) & 0xfff).toBe(10);
    expect(sw.macTable()).toEqual([{ vlan: 10, mac: "020000000001", port: 0 }]);
    // unicast reply from port 1 to the learned MAC goes only to port 0
    eps[1].send(frame(mac(1), mac(2)));
    await delivered(2, eps[0], eps[3]);
    expect(eps[0].got).toHaveLength(1);
    expect(eps[3].got).toHaveLength(1);
    // a tagged frame on the trunk for VLAN 20 reaches port 2 untagged
    eps[3].send(frame(BROADCAST, mac(9), "x", 20));
    await delivered(1, eps[2]);
    expect(eps[2].got).toHaveLength(1);
    expect(eps[2].got[0].readUInt16BE(12)).toBe(0x0800);
    expect(eps[0].got).toHaveLength(1);
    // access ports drop tagged frames
    eps[0].send(frame(BROADCAST, mac(1), "x", 10));
    await quiet();
    expect(eps[1].got).toHaveLength(1);
    await sw.close();
    eps.forEach((e) => e.close());
  });
});

describe("link tunnel (real UDP)", () => {
  it("relays both ways, applies filters and suspend, captures to pcap, and frees its ports", async () => {
    const [aListen, aDeliver, bListen, bDeliver] = [await pool.allocate(), await pool.allocate(), await pool.allocate(), await pool.allocate()];
    const t = await new LinkTunnel({ listen: aListen, deliver: aDeliver }, { listen: bListen, deliver: bDeliver }).open();
    const a = await endpoint(aDeliver, aListen);
    const b = await endpoint(bDeliver, bListen);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pb-tunnel-")), "cap.pcap");
    const w = new PcapWriter(file);
    t.startCapture(w);
    a.send(frame(mac(2), mac(1), "one"));
    b.send(frame(mac(1), mac(2), "two"));
    await delivered(2, a, b);
    expect(b.got.map((x) => x.subarray(14).toString())).toEqual(["one"]);
    expect(a.got.map((x) => x.subarray(14).toString())).toEqual(["two"]);

    t.setFilters({ packet_loss: [100] });
    a.send(frame(mac(2), mac(1), "lost"));
    await quiet();
    expect(b.got).toHaveLength(1);
    t.setFilters({ frequency_drop: [2] });
    for (let i = 0; i < 4; i++) a.send(frame(mac(2), mac(1), `f${i}`));
    await delivered(3, b);
    await quiet(); // and no more than the two that pass
    expect(b.got).toHaveLength(3); // every 2nd of 4 dropped
    t.setFilters({});
    t.setSuspended(true);
    a.send(frame(mac(2), mac(1), "suspended"));
    await quiet();
    expect(b.got).toHaveLength(3);
    t.setSuspended(false);
    t.setFilters({ delay: [150, 0] });
    const sent = Date.now();
    a.send(frame(mac(2), mac(1), "late"));
    await pause(60);
    expect(b.got).toHaveLength(3);
    await delivered(4, b);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(150);
    t.setFilters({ corrupt: [100] });
    a.send(frame(mac(2), mac(1), "corrupt"));
    await delivered(5, b);
    expect(b.got[4].equals(frame(mac(2), mac(1), "corrupt"))).toBe(false);
    expect(b.got[4].length).toBe(frame(mac(2), mac(1), "corrupt").length);

    t.stopCapture()!.close();
    const pcap = parsePcap(fs.readFileSync(file));
    expect(pcap.linktype).toBe(1);
    expect(pcap.packets.map((p) => p.data.subarray(14).toString()).slice(0, 2)).toEqual(["one", "two"]);
    expect(pcap.packets.map((p) => p.data.subarray(14).toString())).not.toContain("lost");

    t.close();
    a.close();
    b.close();
    await waitFor(async () => (await udpPortIsFree(aListen)) && (await udpPortIsFree(bListen)), 2000, "tunnel ports freed");
  });

  it("pcap follower yields the header, past packets and live ones, and ends when the capture stops", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pb-follow-")), "f.pcap");
    const w = new PcapWriter(file);
    w.write(Buffer.from("first"));
    const chunks: Buffer[] = [];
    const reader = (async () => {
      for await (const c of w.follow()) chunks.push(c);
    })();
    await waitFor(() => chunks.length > 0, 2000, "the header and the first packet");
    w.write(Buffer.from("second"));
    await waitFor(() => parsePcap(Buffer.concat(chunks)).packets.length === 2, 2000, "the live packet");
    w.close();
    await reader;
    const parsed = parsePcap(Buffer.concat(chunks));
    expect(parsed.packets.map((p) => p.data.toString())).toEqual(["first", "second"]);
    expect(Buffer.concat(chunks).subarray(0, 4).toString("hex")).toBe("d4c3b2a1");
  });
});

/** Finds IPv4 ICMP echo packets (type 8 request, 0 reply) in Ethernet frames. */
export function icmpEchoes(frames: Buffer[]) {
  const out: { type: number; src: string; dst: string }[] = [];
  for (const f of frames) {
    if (f.length < 34 || f.readUInt16BE(12) !== 0x0800) continue;
    const ihl = (f[14] & 0x0f) * 4;
    if (f[23] !== 1) continue;
    const ip = (o: number) => [...f.subarray(o, o + 4)].join(".");
    out.push({ type: f[14 + ihl], src: ip(26), dst: ip(30) });
  }
  return out;
}

describe.skipIf(!hasVpcs)("two real vpcs through the switch (requires the vpcs package)", () => {
  const owner = `test-owner-${process.pid}-${Date.now()}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pb-vpcs-"));
  const runDir = path.join(dir, "run");

  const take = async (ports: [number, readonly number[]][], offsets: readonly number[] = [0]) => {
    const p = await pool.allocate(offsets);
    ports.push([p, offsets]);
    return p;
  };

  let current: Awaited<ReturnType<typeof twoPcs>> | undefined;
  /**
   * The lab the tests share (starting two vpcs takes seconds): built by whichever test needs it first, and again
   * after a test stopped it.
   */
  const lab = async () => {
    if (!current || current.stopped) current = await twoPcs();
    return current;
  };
  afterAll(async () => {
    if (current && !current.stopped) await current.stop();
  });

  let labs = 0;
  /**
   * Two vpcs, each linked through a tunnel to a port of a two-port access switch, addressed 10.0.0.1 and
   * 10.0.0.2, with their own owner and run directory: the test that checks what a lab leaves behind sees only it.
   */
  const twoPcs = async () => {
    const n = ++labs;
    const lab = {
      owner: `${owner}-lab${n}`,
      runDir: path.join(dir, `run-lab${n}`),
      sw: new EthernetSwitch([0, 1].map((port_number) => ({ port_number, type: "access", vlan: 1 }))),
      pcs: [] as VpcsProcess[],
      tunnels: [] as LinkTunnel[],
      consoles: [] as TelnetClient[],
      ports: [] as [number, readonly number[]][],
      stopped: false,
      async stop() {
        lab.stopped = true;
        lab.consoles.forEach((c) => c.close());
        for (const pc of lab.pcs) await pc.stop();
        lab.tunnels.forEach((t) => t.close());
        await lab.sw.close();
      },
    };
    for (let i = 0; i < 2; i++) {
      const vpcsLocal = await take(lab.ports, VPCS_UDP_OFFSETS);
      const vpcsPeer = await take(lab.ports);
      const swLocal = await take(lab.ports);
      const swPeer = await take(lab.ports);
      await lab.sw.addNio(i, { local: swLocal, remote: swPeer });
      lab.tunnels.push(await new LinkTunnel({ listen: vpcsPeer, deliver: vpcsLocal }, { listen: swPeer, deliver: swLocal }).open());
      const consolePort = await consolePortFromWindow();
      const pc = new VpcsProcess({
        owner: lab.owner,
        nodeId: `pc${i + 1}`,
        workdir: path.join(dir, `lab${n}-pc${i + 1}`),
        runDir: lab.runDir,
        consolePort,
        nio: { local: vpcsLocal, remote: vpcsPeer },
        macOffset: i,
      });
      await pc.start();
      lab.pcs.push(pc);
      lab.consoles.push(await TelnetClient.connect(consolePort));
    }
    await lab.consoles[0].waitFor(/VPCS> $/);
    await lab.consoles[1].waitFor(/VPCS> $/);
    await lab.consoles[0].run("ip 10.0.0.1/24");
    await lab.consoles[1].run("ip 10.0.0.2/24");
    return lab;
  };

  it("tracks the real pids of each daemonized vpcs in a pid file", async () => {
    const { pcs, runDir } = await lab();
    for (const pc of pcs) {
      expect(pc.pids.length).toBeGreaterThanOrEqual(1);
      // The sandbox (bwrap, its keeper) and the daemon's two processes: all alive, none a short-lived helper.
      for (const pid of pc.pids) expect(fs.existsSync(`/proc/${pid}`), `pid ${pid}`).toBe(true);
      const comms = pc.pids.map((pid) => fs.readFileSync(`/proc/${pid}/comm`, "latin1").trim());
      expect(comms.filter((c) => c === "vpcs").length, comms.join(" ")).toBeGreaterThanOrEqual(1);
      expect(comms.filter((c) => !["vpcs", "bwrap", "tail"].includes(c)), comms.join(" ")).toEqual([]);
      const pf = JSON.parse(fs.readFileSync(path.join(runDir, `${pc.opts.nodeId}.json`), "utf8"));
      expect(pf.pids).toEqual(pc.pids);
    }
    expect(pcs[0].commandLine).toMatch(/vpcs -p \d+ -m 0 -i 1 -s \d+ -c \d+ -t 127\.0\.0\.1/);
  }, 60_000);

  it("pings across the switch, and the link capture holds the ICMP echo request and reply", async () => {
    const { tunnels, consoles, sw } = await lab();
    const file = path.join(dir, "captures", "pc1.pcap");
    const w = new PcapWriter(file);
    tunnels[0].startCapture(w);
    const out = await consoles[0].run("ping 10.0.0.2 -c 3", 20_000);
    expect(out.match(/10\.0\.0\.2 icmp_seq=\d ttl=64/g)).toHaveLength(3);
    tunnels[0].stopCapture()!.close();
    const echoes = icmpEchoes(parsePcap(fs.readFileSync(file)).packets.map((p) => p.data));
    expect(echoes).toContainEqual({ type: 8, src: "10.0.0.1", dst: "10.0.0.2" });
    expect(echoes).toContainEqual({ type: 0, src: "10.0.0.2", dst: "10.0.0.1" });
    expect(sw.macTable().map((e) => e.port).sort()).toEqual([0, 1]);
  }, 60_000);

  it("100% packet loss and suspend stop the pings; clearing them restores", async () => {
    const { tunnels, consoles } = await lab();
    tunnels[1].setFilters({ packet_loss: [100] });
    let out = await consoles[0].run("ping 10.0.0.2 -c 2", 20_000);
    expect(out).not.toMatch(/icmp_seq=\d ttl=/);
    tunnels[1].setFilters({});
    out = await consoles[0].run("ping 10.0.0.2 -c 2", 20_000);
    expect(out.match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
    tunnels[0].setSuspended(true);
    out = await consoles[0].run("ping 10.0.0.2 -c 2", 20_000);
    expect(out).not.toMatch(/icmp_seq=\d ttl=/);
    tunnels[0].setSuspended(false);
    out = await consoles[0].run("ping 10.0.0.2 -c 2", 20_000);
    expect(out.match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
  }, 90_000);

  it("stop kills every process and frees every port", async () => {
    const running = await lab();
    const { pcs, ports, runDir } = running;
    const pids = pcs.flatMap((p) => p.pids);
    await running.stop();
    for (const pid of pids) expect(fs.existsSync(`/proc/${pid}`) && !/\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "latin1"))).toBe(false);
    expect(findOwnedPids(running.owner)).toEqual([]);
    const held = async () => {
      const out: number[] = [];
      for (const [p, offsets] of ports) for (const o of offsets) if (!(await udpPortIsFree(p + o))) out.push(p + o);
      return out;
    };
    await waitFor(async () => (await held()).length === 0, 2000, "every UDP port freed").catch(() => {});
    expect(await held()).toEqual([]);
    expect(fs.readdirSync(runDir)).toEqual([]);
  }, 60_000);

  it("runs the node's startup.vpc, and refuses a console port another program holds", async () => {
    const ports: [number, readonly number[]][] = [];
    const workdir = path.join(dir, "scripted");
    fs.mkdirSync(workdir, { recursive: true });
    fs.writeFileSync(path.join(workdir, "startup.vpc"), "ip 10.7.7.7/24\n");
    const consolePort = await consolePortFromWindow();
    const pc = new VpcsProcess({ owner, nodeId: "scripted", workdir, runDir, consolePort, nio: { local: await take(ports, VPCS_UDP_OFFSETS), remote: await take(ports) } });
    await pc.start();
    expect(pc.commandLine).toContain(path.join(workdir, "startup.vpc"));
    const c = await TelnetClient.connect(consolePort);
    try {
      await c.waitFor(/VPCS> $/);
      expect(await c.run("show ip")).toContain("10.7.7.7");
    } finally {
      c.close();
      await pc.stop();
    }

    const squatter = net.createServer();
    await new Promise<void>((r) => squatter.listen(0, "0.0.0.0", r));
    const taken = (squatter.address() as net.AddressInfo).port;
    const blocked = new VpcsProcess({ owner, nodeId: "blocked", workdir: path.join(dir, "blocked"), runDir, consolePort: taken, nio: { local: await take(ports, VPCS_UDP_OFFSETS), remote: await take(ports) } });
    await expect(blocked.start()).rejects.toThrow(`Console port ${taken} is already used`);
    squatter.close();
    expect(findOwnedPids(owner, "blocked")).toEqual([]);
  }, 20_000);

  it("crash recovery kills the processes a previous server left behind", async () => {
    const ports: [number, readonly number[]][] = [];
    const crashOwner = `${owner}-crash`;
    const local = await take(ports, VPCS_UDP_OFFSETS);
    const orphan = new VpcsProcess({
      owner: crashOwner,
      nodeId: "orphan",
      workdir: path.join(dir, "orphan"),
      runDir,
      consolePort: await consolePortFromWindow(),
      nio: { local, remote: await take(ports) },
    });
    await orphan.start();
    const pids = orphan.pids;
    expect(pids.length).toBeGreaterThan(0);
    // The server "crashes": the object is forgotten, only the pid file and the processes remain.
    const killed = await recoverLeftovers(runDir, crashOwner);
    expect(killed.sort()).toEqual([...pids].sort());
    expect(findOwnedPids(crashOwner)).toEqual([]);
    expect(fs.readdirSync(runDir)).toEqual([]);
  }, 20_000);
});
