import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { once } from "node:events";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { COMPUTE_HOST, computeInstance, twoHosts } from "../support/computes.js";
import { icmpEchoes } from "../support/lab.js";
import { GuestConsole, guestProperties, processesMentioning, qemuInstalled, received, testGuest } from "../support/qemu-guest.js";
import { call, freshDatabaseUrl, portWindow, spawnCliServer, type TestServer, startTestServer } from "../support/server.js";
import { step } from "../support/steps.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * The QEMU lab, black-box through the REST API with real qemu processes: two tiny Linux guests (VM1, VM2) and a
 * vpcs PC on a switch, first all on the local compute, then with VM2 on a second instance in compute mode. The
 * guest is built from Debian packages (cached between runs) and uploaded through the image API.
 */
const tools = toolAvailable("qemu-system-x86_64, qemu-img and vpcs", qemuInstalled() && findVpcs() !== null);

async function upload(url: string, computeId: string, files: Record<string, string>): Promise<void> {
  for (const [name, file] of Object.entries(files)) {
    const r = await fetch(`${url}/v2/computes/${computeId}/qemu/images/${name}`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: fs.readFileSync(file),
    });
    expect(r.status, await r.text()).toBeLessThan(300);
  }
}

interface Lab {
  server: TestServer;
  P: string;
  ids: Record<string, string>;
  links: Record<string, string>;
  consoles: GuestConsole[];
  pc?: TelnetClient;
}

/** VM1 (local), VM2 (on `vm2Compute`), PC1 and SW1 (local), each end node on a switch port; images uploaded first (through the controller, which streams them on to a remote compute). */
async function buildLab(server: TestServer, vm2Compute: string, guest: { kernel: string; initrd: string }): Promise<Lab> {
  for (const computeId of new Set(["local", vm2Compute])) await upload(server.url, computeId, { vmlinuz: guest.kernel, "initrd.gz": guest.initrd });
  const p = await call(server.url, "POST", "/v2/projects", { name: `qemu-lab-${randomUUID().slice(0, 8)}` });
  const lab: Lab = { server, P: `/v2/projects/${p.body.project_id}`, ids: {}, links: {}, consoles: [] };
  const nodes: [string, string, string, object?][] = [
    ["VM1", "qemu", "local", guestProperties("vm1", "10.0.0.1/24")],
    ["VM2", "qemu", vm2Compute, guestProperties("vm2", "10.0.0.2/24")],
    ["PC1", "vpcs", "local"],
    ["SW1", "ethernet_switch", "local"],
  ];
  for (const [name, type, computeId, properties] of nodes) {
    const r = await call(server.url, "POST", `${lab.P}/nodes`, { name, node_type: type, compute_id: computeId, ...(properties && { properties }) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    lab.ids[name] = r.body.node_id;
  }
  for (const [name, port] of [["VM1", 0], ["VM2", 1], ["PC1", 2]] as const) {
    const r = await call(server.url, "POST", `${lab.P}/links`, {
      nodes: [
        { node_id: lab.ids[name], adapter_number: 0, port_number: 0 },
        { node_id: lab.ids.SW1, adapter_number: 0, port_number: port },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    lab.links[name] = r.body.link_id;
  }
  return lab;
}

function closeConsoles(lab: Lab | undefined): void {
  lab?.consoles.forEach((c) => c.close());
  lab?.pc?.close();
}

const nodesByName = async (lab: Lab) => Object.fromEntries(((await call(lab.server.url, "GET", `${lab.P}/nodes`)).body as any[]).map((n) => [n.name, n]));

/** The story both labs tell once started: consoles, pings, a capture on VM2's link, suspend/resume of VM2, stop. */
async function labStory(lab: Lab): Promise<void> {
  const { server, P, ids, links } = lab;
  let byName = await nodesByName(lab);
  await step("the serial consoles give the guests' shells; PC1 gets its address", async () => {
    lab.consoles.push(await GuestConsole.open(byName.VM1.console, byName.VM1.console_host, "vm1"));
    lab.consoles.push(await GuestConsole.open(byName.VM2.console, byName.VM2.console_host, "vm2"));
    lab.pc = await TelnetClient.connect(byName.PC1.console, byName.PC1.console_host);
    await lab.pc.waitFor(/VPCS> $/);
    await lab.pc.run("ip 10.0.0.3/24");
  });
  const [vm1, vm2] = lab.consoles;

  await step("VM1 → VM2 and VM2 → PC1 over the switch; PC1 → VM1", async () => {
    // Three tries of 3 s: the first echo waits for ARP across a loaded host (TCG guests, a second instance).
    expect(received(await vm1.run("ping -c 3 -W 3 10.0.0.2", 30_000))).toBeGreaterThan(0);
    expect(received(await vm2.run("ping -c 3 -W 3 10.0.0.3", 30_000))).toBeGreaterThan(0);
    expect(await lab.pc!.run("ping 10.0.0.1 -c 2", 20_000)).toMatch(/10\.0\.0\.1 icmp_seq=\d+ ttl=64/);
  });

  await step("VM2's web console (…/console/ws; relayed from its compute when it runs there): the guest's shell, raw bytes both ways", async () => {
    vm2.close(); // QEMU serves one console client at a time
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}${P}/nodes/${ids.VM2}/console/ws`);
    let output = Buffer.alloc(0);
    let frames = 0;
    let oversized = 0;
    ws.on("message", (data: Buffer, binary) => {
      frames++;
      if (!binary || data.length > 1024) oversized++;
      output = Buffer.concat([output, data]);
    });
    await once(ws, "open");
    // QEMU replays nothing from before the connection: ask for a prompt now and then until the shell answers.
    const text = () => output.toString("latin1");
    let asked = 0;
    const promptOrAsk = () => {
      if (/vm2# (\x1b\[6n)?$/.test(text())) return true;
      if (Date.now() - asked > 1000) {
        asked = Date.now();
        ws.send("\r");
      }
      return false;
    };
    await waitFor(promptOrAsk, 60_000, "the shell on the web console");
    const from = output.length;
    ws.send("echo web-console-$((6*7))\r");
    await waitFor(() => /web-console-42/.test(output.subarray(from).toString("latin1")), 20_000, "the command's answer");
    expect(frames).toBeGreaterThan(0);
    expect(oversized).toBe(0);
    ws.close();
    await once(ws, "close");
  });

  await step("a capture on VM2's link holds VM1's echo requests to VM2 and VM2's replies", async () => {
    const start = await call(server.url, "POST", `${P}/links/${links.VM2}/start_capture`, {});
    expect(start.status, JSON.stringify(start.body)).toBe(201);
    expect(received(await vm1.run("ping -c 1 -W 2 10.0.0.2"))).toBe(1);
    const stop = await call(server.url, "POST", `${P}/links/${links.VM2}/stop_capture`, {});
    const echoes = icmpEchoes(parsePcap(fs.readFileSync(stop.body.capture_file_path ?? start.body.capture_file_path)).packets.map((p) => p.data));
    expect(echoes).toContainEqual({ type: 8, src: "10.0.0.1", dst: "10.0.0.2" });
    expect(echoes).toContainEqual({ type: 0, src: "10.0.0.2", dst: "10.0.0.1" });
  });

  await step("VM2 suspended: status suspended, pings unanswered; started again: it answers with the same address", async () => {
    const s = await call(server.url, "POST", `${P}/nodes/${ids.VM2}/suspend`);
    expect(s.status).toBe(200);
    expect(s.body.status).toBe("suspended");
    expect(received(await vm1.run("ping -c 1 -W 1 10.0.0.2"))).toBe(0);
    const r = await call(server.url, "POST", `${P}/nodes/${ids.VM2}/start`);
    expect(r.body.status).toBe("started");
    expect(received(await vm1.run("ping -c 2 -W 2 10.0.0.2"))).toBeGreaterThan(0);
  });

  await step("bulk stop: every node stopped, the consoles closed, no qemu process left", async () => {
    expect((await call(server.url, "POST", `${P}/nodes/stop`)).status).toBe(204);
    byName = await nodesByName(lab);
    expect(byName.VM1.status).toBe("stopped");
    expect(byName.VM2.status).toBe("stopped");
    await waitFor(() => processesMentioning([ids.VM1, ids.VM2]).length === 0, 5000, "no qemu of the lab running");
    await expect(TelnetClient.connect(byName.VM2.console, byName.VM2.console_host, 2000)).rejects.toThrow();
  });
}

/** The command line of a started VM: its kernel, a UDP NIC on the link fabric, the MAC derived from its id. */
function expectVmCommandLine(node: any): void {
  expect(node.status).toBe("started");
  expect(node.command_line).toMatch(new RegExp(`qemu-system-x86_64 -name ${node.name} -m 128M .*-kernel \\S+/images/QEMU/vmlinuz`));
  expect(node.command_line).toMatch(/-netdev socket,id=gns3-0,udp=127\.0\.0\.1:\d+,localaddr=127\.0\.0\.1:\d+/);
  const hex = node.node_id.replaceAll("-", "");
  expect(node.command_line).toContain(`virtio-net-pci,mac=0c:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}:00:00`);
}

describe.skipIf(!tools)("QEMU lab on the local compute: VM1, VM2 and PC1 on a switch (requires qemu-system-x86_64, qemu-img and vpcs)", () => {
  let lab: Lab;

  beforeAll(async () => {
    // Room for VM1 and VM2 (128 MB each), not for a third: the memory cap is part of the story.
    const guest = testGuest(); // before any server: the build blocks this process, servers included
    lab = await buildLab(await startTestServer({ vmMemoryLimit: 300 }), "local", guest);
  }, 120_000);

  afterAll(async () => {
    closeConsoles(lab);
    await lab?.server.close();
  });

  it("starts the VMs, refuses one past the RAM cap, pings VM↔VM and PC↔VM, captures, suspends and resumes, and leaves no qemu behind", async () => {
    const { server, P, ids } = lab;
    await step("bulk start: each VM runs its qemu with the guest kernel", async () => {
      expect((await call(server.url, "POST", `${P}/nodes/start`)).status).toBe(204);
      const byName = await nodesByName(lab);
      expectVmCommandLine(byName.VM1);
      expectVmCommandLine(byName.VM2);
      expect(processesMentioning([ids.VM1, ids.VM2])).toHaveLength(2);
    });

    await step("the memory cap: a third VM that would pass it is refused before anything is launched", async () => {
      const r = await call(server.url, "POST", `${P}/nodes`, { name: "VM3", node_type: "qemu", compute_id: "local", properties: guestProperties("vm3", "10.0.0.9/24") });
      expect(r.status).toBe(201);
      const start = await call(server.url, "POST", `${P}/nodes/${r.body.node_id}/start`);
      expect(start.status).toBe(409);
      expect(start.body.message).toMatch(/VM3: .*128 MB.*256 of the 300 MB/);
      expect(processesMentioning([r.body.node_id])).toEqual([]);
      expect((await call(server.url, "DELETE", `${P}/nodes/${r.body.node_id}`)).status).toBe(204);
    });

    await labStory(lab);
  }, 150_000);
});

describe.skipIf(!tools)("QEMU lab across hosts: VM2 on a second instance in compute mode (requires qemu-system-x86_64, qemu-img and vpcs)", () => {
  let lab: Lab;
  let cmp: TestServer;
  let compute: Awaited<ReturnType<typeof computeInstance>>;

  beforeAll(async () => {
    const guest = testGuest();
    let ctl: TestServer;
    ({ ctl, cmp, compute } = await twoHosts());
    lab = await buildLab(ctl, "hostb", guest);
  }, 120_000);

  afterAll(async () => {
    closeConsoles(lab);
    await lab?.server.close();
    await cmp?.close();
    await compute?.drop();
  });

  it("VM2 runs on the compute (its console there), and the same lab story holds across the hosts", async () => {
    const { server, P, ids } = lab;
    await step("bulk start: VM2's qemu is the compute's, its console on the compute's address", async () => {
      expect((await call(server.url, "POST", `${P}/nodes/start`)).status).toBe(204);
      const byName = await nodesByName(lab);
      expectVmCommandLine(byName.VM1);
      expectVmCommandLine(byName.VM2);
      expect(byName.VM2.console_host).toBe(COMPUTE_HOST);
      expect(byName.VM2.command_line).toContain(cmp.dataDir);
      const N = `/v2/compute/projects/${P.split("/").pop()}/qemu/nodes/${ids.VM2}`;
      expect((await call(cmp.url, "GET", N)).body).toMatchObject({ status: "started", ram: 128, kernel_image: "vmlinuz" });
      // The compute's own suspend and resume routes (the controller resumes with start).
      expect((await call(cmp.url, "POST", `${N}/suspend`)).status).toBe(204);
      expect((await call(cmp.url, "GET", N)).body.status).toBe("suspended");
      expect((await call(cmp.url, "POST", `${N}/resume`)).status).toBe(204);
      expect((await call(cmp.url, "GET", N)).body.status).toBe("started");
    });

    await labStory(lab);
  }, 150_000);
});

describe.skipIf(!tools)("QEMU processes and disks: no VM outlives its node, project or server; disks are linked clones (requires qemu-system-x86_64, qemu-img and vpcs)", () => {
  const servers: TestServer[] = [];
  const uploaded = new Set<string>();
  let guest: { kernel: string; initrd: string };

  beforeAll(() => {
    guest = testGuest();
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  /** A project with `count` VMs (no links: only their processes matter here), the images uploaded. */
  async function vms(url: string, count: number) {
    if (!uploaded.has(url)) await upload(url, "local", { vmlinuz: guest.kernel, "initrd.gz": guest.initrd });
    uploaded.add(url);
    const p = await call(url, "POST", "/v2/projects", { name: `hygiene-${randomUUID().slice(0, 8)}` });
    const P = `/v2/projects/${p.body.project_id}`;
    const ids: string[] = [];
    for (let i = 1; i <= count; i++) {
      const n = await call(url, "POST", `${P}/nodes`, { name: `VM${i}`, node_type: "qemu", compute_id: "local", properties: guestProperties(`vm${i}`, `10.0.0.${i}/24`) });
      expect(n.status, JSON.stringify(n.body)).toBe(201);
      ids.push(n.body.node_id);
    }
    return { P, ids };
  }

  /** One started VM. */
  async function oneVm(url: string) {
    const { P, ids: [id] } = await vms(url, 1);
    const start = await call(url, "POST", `${P}/nodes/${id}/start`);
    expect(start.body.status, JSON.stringify(start.body)).toBe("started");
    expect(processesMentioning([id])).toHaveLength(1);
    return { P, id };
  }

  const gone = (id: string, what: string) => waitFor(() => processesMentioning([id]).length === 0, 6000, `no qemu after ${what}`);

  it("deleting a running VM, closing its project and stopping the server each end its qemu", async () => {
    const server = await startTestServer();
    servers.push(server);
    const a = await oneVm(server.url);
    const [pid] = processesMentioning([a.id]);
    const reload = await call(server.url, "POST", `${a.P}/nodes/${a.id}/reload`);
    expect(reload.body.status).toBe("started");
    expect(processesMentioning([a.id])).toEqual([pid]); // reset in place, not a new process
    expect((await call(server.url, "DELETE", `${a.P}/nodes/${a.id}`)).status).toBe(204);
    await gone(a.id, "delete");

    const b = await oneVm(server.url);
    expect((await call(server.url, "POST", `${b.P}/close`)).status).toBe(204);
    expect(processesMentioning([b.id])).toEqual([]); // the close answers once its VMs are ended
    await call(server.url, "POST", `${b.P}/open`);
    expect((await call(server.url, "GET", `${b.P}/nodes/${b.id}`)).body.status).toBe("stopped");

    const c = await oneVm(server.url);
    await server.close();
    servers.pop();
    await gone(c.id, "server shutdown");
  }, 60_000);

  it("a VM that dies on its own shows stopped, and starts again", async () => {
    const server = await startTestServer();
    servers.push(server);
    const vm = await oneVm(server.url);
    const [pid] = processesMentioning([vm.id]);
    process.kill(pid, "SIGKILL");
    await waitFor(async () => (await call(server.url, "GET", `${vm.P}/nodes/${vm.id}`)).body.status === "stopped", 5000, "the node shown stopped");
    const again = await call(server.url, "POST", `${vm.P}/nodes/${vm.id}/start`);
    expect(again.body.status).toBe("started");
    expect(processesMentioning([vm.id])).toHaveLength(1);
    await call(server.url, "POST", `${vm.P}/nodes/${vm.id}/stop`);
  }, 60_000);

  it("a VM whose console port another program holds does not start: 409 with QEMU's reason, nothing left running", async () => {
    const server = await startTestServer();
    servers.push(server);
    const { P, ids: [id] } = await vms(server.url, 1);
    const node = (await call(server.url, "GET", `${P}/nodes/${id}`)).body;
    const squatter = net.createServer().listen(node.console, node.console_host);
    await once(squatter, "listening");
    try {
      const r = await call(server.url, "POST", `${P}/nodes/${id}/start`);
      expect(r.status).toBe(409);
      expect(r.body.message).toMatch(new RegExp(`^QEMU could not start VM1: .*${node.console}`));
      expect(processesMentioning([id])).toEqual([]);
      expect((await call(server.url, "GET", `${P}/nodes/${id}`)).body.status).toBe("stopped");
    } finally {
      squatter.close();
    }
  }, 60_000);

  it("VMs started together cannot pass the memory cap: of three 128 MB VMs under a 300 MB cap, one is refused", async () => {
    const server = await startTestServer({ vmMemoryLimit: 300 });
    servers.push(server);
    const { P, ids } = await vms(server.url, 3);
    const answers = await Promise.all(ids.map((id) => call(server.url, "POST", `${P}/nodes/${id}/start`)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 409]);
    expect(processesMentioning(ids)).toHaveLength(2);
    expect((await call(server.url, "POST", `${P}/nodes/stop`)).status).toBe(204);
    for (const id of ids) await gone(id, "stop");
  }, 60_000);

  it("a disk image is used as a linked clone: a qcow2 overlay in the node directory, the image itself never written", async () => {
    const server = await startTestServer();
    servers.push(server);
    const base = path.join(server.dataDir, "disk.raw");
    fs.writeFileSync(base, Buffer.alloc(1 << 20));
    await upload(server.url, "local", { "disk.raw": base });
    const { P, ids: [id] } = await vms(server.url, 1);
    const update = await call(server.url, "PUT", `${P}/nodes/${id}`, { properties: { hda_disk_image: "disk.raw", hda_disk_interface: "virtio" } });
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    const started = await call(server.url, "POST", `${P}/nodes/${id}/start`);
    const overlay = path.join(started.body.node_directory, "hda_disk.qcow2");
    expect(started.body.command_line).toContain(`-drive file=${overlay},if=virtio,index=0,media=disk,id=drive0`);
    const info = JSON.parse(execFileSync("qemu-img", ["info", "-U", "--output=json", overlay], { encoding: "utf8" }));
    expect(info).toMatchObject({ format: "qcow2", "backing-filename-format": "raw", "virtual-size": 1 << 20 });
    expect(info["backing-filename"]).toMatch(/\/images\/QEMU\/disk\.raw$/);
    expect((await call(server.url, "POST", `${P}/nodes/${id}/stop`)).body.status).toBe("stopped");
    // The image as the store lists it is still the uploaded one.
    const images = (await call(server.url, "GET", "/v2/computes/local/qemu/images")).body as { filename: string; md5sum: string }[];
    expect(images.find((i) => i.filename === "disk.raw")?.md5sum).toBe(createHash("md5").update(fs.readFileSync(base)).digest("hex"));
  }, 60_000);

  it("a crash leaves a VM behind only until the next start-up, which kills it and shows the node stopped", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-qemu-crash-"));
    const db = await freshDatabaseUrl(dataDir);
    const ranges = portWindow();
    const first = await startTestServer(ranges, { databaseUrl: db.url, dataDir });
    const vm = await oneVm(first.url);
    // The server goes away without stopping its VMs (its runtime's shutdown skipped).
    first.ctx.services.emulation.runtime.stop = async () => {};
    await first.close();
    expect(processesMentioning([vm.id])).toHaveLength(1);
    const second = await startTestServer(ranges, { databaseUrl: db.url, dataDir });
    servers.push(second);
    await gone(vm.id, "the next start-up");
    expect((await call(second.url, "GET", `${vm.P}/nodes/${vm.id}`)).body.status).toBe("stopped");
    await second.close();
    servers.pop();
    await db.drop();
  }, 60_000);

  it("kill -9 of the server: the kernel ends its VMs at once (parent-death signal), no start-up needed", async () => {
    const s = await spawnCliServer();
    try {
      const vm = await oneVm(s.url);
      s.child.kill("SIGKILL");
      await gone(vm.id, "kill -9 of the server");
    } finally {
      await s.drop();
    }
  }, 60_000);
});
