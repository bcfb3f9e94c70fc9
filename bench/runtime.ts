/**
 * Runtime benchmark (not a test): `npx tsx bench/runtime.ts`
 *
 * 1. Node start latency: VpcsProcess.start() → the telnet console answers with the VPCS prompt (needs `vpcs`).
 * 2. Forwarding throughput: Ethernet frames through link relay → switch → link relay, against a bare Node UDP
 *    relay (one socket in, one socket out) measured in the same run, so the ratio is independent of the host.
 *    Traffic is sent in windows (send W frames, wait until they arrived or a short timeout) so that the
 *    number measures forwarding, not socket buffer overflow.
 */
import dgram from "node:dgram";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { EthernetSwitch } from "../src/emulation/runtime/ethernet.js";
import { LinkTunnel } from "../src/emulation/runtime/link-tunnel.js";
import { TelnetClient } from "../src/emulation/runtime/telnet-client.js";
import { bind, UdpPortPool } from "../src/emulation/runtime/udp-port-pool.js";
import { findVpcs, freeTcpPort, VPCS_UDP_OFFSETS, VpcsProcess } from "../src/emulation/runtime/vpcs.js";

const FRAMES = Number(process.env.BENCH_FRAMES ?? 50_000);
const WINDOW = 256;
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const pool = new UdpPortPool(40000, 40999);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function startLatency(): Promise<number[] | null> {
  if (!findVpcs()) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pb-bench-"));
  const owner = `bench-${process.pid}`;
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const local = await pool.allocate(VPCS_UDP_OFFSETS);
    const remote = await pool.allocate();
    const consolePort = await freeTcpPort();
    const proc = new VpcsProcess({ owner, nodeId: `b${i}`, workdir: path.join(dir, `b${i}`), runDir: path.join(dir, "run"), consolePort, nio: { local, remote } });
    const t0 = performance.now();
    await proc.start();
    const c = await TelnetClient.connect(consolePort);
    await c.waitFor(/VPCS> $/);
    times.push(performance.now() - t0);
    c.close();
    await proc.stop();
    pool.release(local, VPCS_UDP_OFFSETS);
    pool.release(remote);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return times;
}

/** Sends FRAMES frames from `send` and counts arrivals at `sink`; returns frames/s. */
async function pump(sender: dgram.Socket, to: number, sink: dgram.Socket, frame: Buffer): Promise<{ pps: number; lost: number }> {
  let got = 0;
  let waiter: (() => void) | undefined;
  sink.on("message", () => {
    got++;
    waiter?.();
  });
  const t0 = performance.now();
  let sent = 0;
  while (sent < FRAMES) {
    const n = Math.min(WINDOW, FRAMES - sent);
    for (let i = 0; i < n; i++) sender.send(frame, to, "127.0.0.1");
    sent += n;
    const target = sent;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 50);
      waiter = () => {
        if (got >= target) {
          clearTimeout(t);
          resolve();
        }
      };
      waiter();
    });
  }
  const secs = (performance.now() - t0) / 1000;
  sink.removeAllListeners("message");
  return { pps: got / secs, lost: FRAMES - got };
}

async function socketOn(port: number) {
  const s = dgram.createSocket("udp4");
  await bind(s, port, "127.0.0.1");
  return s;
}

function ethernetFrame(): Buffer {
  const f = Buffer.alloc(98);
  Buffer.from("020000000002", "hex").copy(f, 0);
  Buffer.from("020000000001", "hex").copy(f, 6);
  f.writeUInt16BE(0x0800, 12);
  return f;
}

async function bareRelay() {
  const [inPort, outPort, sinkPort] = [await pool.allocate(), await pool.allocate(), await pool.allocate()];
  const relayIn = await socketOn(inPort);
  const relayOut = await socketOn(outPort);
  relayIn.on("message", (m) => relayOut.send(m, sinkPort, "127.0.0.1"));
  const sender = dgram.createSocket("udp4");
  const sink = await socketOn(sinkPort);
  const r = await pump(sender, inPort, sink, ethernetFrame());
  for (const s of [relayIn, relayOut, sender, sink]) s.close();
  return r;
}

async function throughSwitch() {
  // PC-A ⇄ relay 1 ⇄ switch port 0 … switch port 1 ⇄ relay 2 ⇄ PC-B, all on real UDP sockets.
  const sw = new EthernetSwitch([0, 1].map((n) => ({ port_number: n, type: "access", vlan: 1 })));
  const pcs: { local: number; peer: number }[] = [];
  const tunnels: LinkTunnel[] = [];
  for (let i = 0; i < 2; i++) {
    const pc = { local: await pool.allocate(), peer: await pool.allocate() };
    const swLocal = await pool.allocate();
    const swPeer = await pool.allocate();
    await sw.addNio(i, { local: swLocal, remote: swPeer });
    tunnels.push(await new LinkTunnel({ listen: pc.peer, deliver: pc.local }, { listen: swPeer, deliver: swLocal }).open());
    pcs.push(pc);
  }
  const a = await socketOn(pcs[0].local);
  const b = await socketOn(pcs[1].local);
  // Teach the switch where B lives, so the benchmark measures unicast forwarding.
  const learn = Buffer.from(ethernetFrame());
  Buffer.from("020000000001", "hex").copy(learn, 0);
  Buffer.from("020000000002", "hex").copy(learn, 6);
  b.send(learn, pcs[1].peer, "127.0.0.1");
  await new Promise((r) => setTimeout(r, 50));
  a.removeAllListeners("message");
  const r = await pump(a, pcs[0].peer, b, ethernetFrame());
  a.close();
  b.close();
  tunnels.forEach((t) => t.close());
  await sw.close();
  return r;
}

const starts = await startLatency();
const bare = await bareRelay();
const sw = await throughSwitch();
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(`frames per run: ${FRAMES} (window ${WINDOW}), node ${process.version}, ${os.cpus().length} CPUs`);
if (starts) {
  console.log(`vpcs start → console prompt: median ${median(starts).toFixed(1)} ms, min ${Math.min(...starts).toFixed(1)} ms, max ${Math.max(...starts).toFixed(1)} ms (${starts.length} starts)`);
} else console.log("vpcs start latency: skipped (vpcs not installed)");
console.log(`bare Node UDP relay:                   ${fmt(bare.pps)} frames/s (lost ${bare.lost})`);
console.log(`relay → switch → relay (2 links, 3 hops): ${fmt(sw.pps)} frames/s (lost ${sw.lost})`);
console.log(`ratio switch path / bare relay: ${(sw.pps / bare.pps).toFixed(2)}`);
