/**
 * QEMU node benchmark (not a test): `npm run bench:qemu` (needs qemu-system-x86_64, qemu-img, vpcs; builds the
 * test guest with scripts/build-test-guest.sh, cached). Through the REST API of a Patchbay child process:
 *
 * 1. Start → prompt: POST .../start, then the serial console (telnet) until the guest's shell prompt, for one VM
 *    alone (BENCH_STARTS times) and for BENCH_TOGETHER VMs started at once; the same for a vpcs node.
 * 2. RSS per node process once at its prompt (qemu-system for a VM, the vpcs processes for a PC), from /proc.
 * 3. The API while guests boot: latency of GET .../nodes polled every 100 ms during the "together" boot, against
 *    the same poll with nothing booting.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TelnetClient } from "../src/emulation/runtime/telnet-client.js";
import { findOwnedPids } from "../src/emulation/runtime/processes.js";
import { GuestConsole, guestProperties, testGuest } from "../test/support/qemu-guest.js";
import { freshDatabase, machineLine, PATCHBAY_ROLE, request, requestJson, servePatchbay, startChild, stopChildren } from "./harness.js";

const SELF = fileURLToPath(import.meta.url);
const STARTS = Number(process.env.BENCH_STARTS ?? 3);
const TOGETHER = Number(process.env.BENCH_TOGETHER ?? 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs: number[], unit: string, digits = 0) =>
  `median ${median(xs).toFixed(digits)} ${unit} (min ${Math.min(...xs).toFixed(digits)}, max ${Math.max(...xs).toFixed(digits)}, n=${xs.length})`;

function rssMiB(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "latin1"));
    kb += Number(m?.[1] ?? 0);
  }
  return kb / 1024;
}

async function main(): Promise<void> {
  const guest = testGuest();
  const db = await freshDatabase();
  const pb = await startChild(SELF, [PATCHBAY_ROLE, db.url, db.dataDir]);
  const port: number = pb.msg.port;
  const owner = path.resolve(db.dataDir);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const api = (method: "GET" | "POST" | "DELETE", p: string, body?: unknown) => requestJson(agent, port, method, p, body);
  try {
    console.log(machineLine());
    for (const [name, file] of [["vmlinuz", guest.kernel], ["initrd.gz", guest.initrd]]) {
      const r = await fetch(`http://127.0.0.1:${port}/v2/computes/local/qemu/images/${name}`, { method: "POST", body: fs.readFileSync(file) });
      if (r.status >= 300) throw new Error(`upload ${name}: ${r.status}`);
    }
    const { project_id: id } = await api("POST", "/v2/projects", { name: "bench-qemu" });
    const P = `/v2/projects/${id}`;
    const node = async (name: string, type: string, properties?: object) => api("POST", `${P}/nodes`, { name, node_type: type, compute_id: "local", properties });

    /** Starts the nodes at once; per node: ms from its start request to its prompt, and its processes' RSS then. */
    async function startToPrompt(nodes: { node_id: string; name: string; node_type: string }[]) {
      return Promise.all(
        nodes.map(async (n) => {
          const t0 = performance.now();
          const started = await api("POST", `${P}/nodes/${n.node_id}/start`);
          let close: () => void;
          if (n.node_type === "qemu") {
            const c = await GuestConsole.open(started.console, "127.0.0.1", n.name.toLowerCase());
            close = () => c.close();
          } else {
            const c = await TelnetClient.connect(started.console);
            await c.waitFor(/VPCS> $/, 10_000);
            close = () => c.close();
          }
          const ms = performance.now() - t0;
          close();
          return { ms, rss: rssMiB(findOwnedPids(owner, n.node_id)) };
        }),
      );
    }
    const stopAll = () => request(agent, port, { method: "POST", path: `${P}/nodes/stop` });

    const vm = await node("VMA", "qemu", guestProperties("vma", "10.0.0.1/24"));
    const pc = await node("PC1", "vpcs");
    const alone: { ms: number; rss: number }[] = [];
    const pcs: { ms: number; rss: number }[] = [];
    for (let i = 0; i < STARTS; i++) {
      alone.push(...(await startToPrompt([vm])));
      await stopAll();
      pcs.push(...(await startToPrompt([pc])));
      await stopAll();
    }

    const idle: number[] = [];
    const poll = async (into: number[], until: () => boolean) => {
      while (!until()) {
        const t0 = performance.now();
        await request(agent, port, { method: "GET", path: `${P}/nodes` });
        into.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const idleUntil = Date.now() + 3000;
    await poll(idle, () => Date.now() > idleUntil);

    const many = [];
    for (let i = 0; i < TOGETHER; i++) many.push(await node(`VM${i}`, "qemu", guestProperties(`vm${i}`, `10.0.1.${i + 1}/24`)));
    const during: number[] = [];
    let done = false;
    const polling = poll(during, () => done);
    const together = await startToPrompt(many).finally(() => (done = true));
    await polling;
    await stopAll();

    console.log("\n| measurement | result |\n|---|---|");
    console.log(`| vpcs node: start → console prompt (${STARTS} starts) | ${fmt(pcs.map((r) => r.ms), "ms")} |`);
    console.log(`| vpcs node: RSS at the prompt (both vpcs processes) | ${fmt(pcs.map((r) => r.rss), "MiB", 1)} |`);
    console.log(`| qemu VM (TCG, 128 MB, 1 vCPU) alone: start → shell prompt (${STARTS} starts) | ${fmt(alone.map((r) => r.ms), "ms")} |`);
    console.log(`| qemu VM alone: RSS at the prompt | ${fmt(alone.map((r) => r.rss), "MiB", 0)} |`);
    console.log(`| ${TOGETHER} qemu VMs started at once: start → shell prompt | ${fmt(together.map((r) => r.ms), "ms")} |`);
    console.log(`| ${TOGETHER} qemu VMs at once: RSS per VM at the prompt | ${fmt(together.map((r) => r.rss), "MiB", 0)} |`);
    console.log(`| GET nodes, nothing booting (every 100 ms) | ${fmt(idle, "ms", 1)} |`);
    console.log(`| GET nodes while the ${TOGETHER} VMs boot | ${fmt(during, "ms", 1)} |`);
  } finally {
    agent.destroy();
    await stopChildren([pb.child]);
    await db.drop();
  }
}

if (process.argv[2] === PATCHBAY_ROLE) await servePatchbay(process.argv[3], process.argv[4]);
else await main();
