import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOnPath } from "../../src/platform/core/executables.js";
import { hostLinkUnavailable } from "../../src/emulation/runtime/host-link.js";
import { natUnavailable } from "../../src/emulation/runtime/nat-network.js";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { findOwnedPids } from "../../src/emulation/runtime/processes.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { icmpEchoes } from "../support/lab.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { dockerdAnswers, toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 21's lab: a container, a cloud, a NAT node, a VPCS and a switch in one project, with real pings between
 * them. The switch joins PC1, the container D1, the NAT node (DHCP and the gateway, on Patchbay's own NAT bridge)
 * and a cloud bound to the host end of a veth whose other end is in a network namespace made by the test; all of
 * them are on the NAT's subnet. The capture of the container's link holds the ICMP; closing the project leaves no
 * container, helper process, bridge or TAP.
 */
const NAT_DEFAULTS = { natInterface: "virbr0", bridge: "pbnat0", subnet: "192.168.122.0/24" };
const ready =
  toolAvailable("vpcs", findVpcs() !== null) &&
  toolAvailable("dockerd (scripts/start-dockerd.sh)", dockerdAnswers) &&
  toolAvailable("root (cloud and NAT nodes open host interfaces)", process.getuid?.() === 0) &&
  toolAvailable("socat and setpriv", hostLinkUnavailable("") === null) &&
  toolAvailable("dnsmasq and nft (dnsmasq-base, nftables)", natUnavailable(NAT_DEFAULTS) === null);
const IMAGE = ready
  ? execFileSync(path.resolve(import.meta.dirname, "../../scripts/build-test-docker-image.sh"), { encoding: "utf8" }).trim()
  : "patchbay-busybox:latest";

const tag = randomBytes(3).toString("hex");
const NS = `pbmix-${tag}`;
const HOST_END = `pbmv${tag}`;
const NS_END = `pbmn${tag}`;
const BRIDGE = `pbmb${tag}`;
const NET = `10.${160 + (randomBytes(1)[0] % 40)}.${1 + (randomBytes(1)[0] % 250)}`; // .1 gateway, .250 D1, .251 the namespace
const ip = findOnPath("ip") ?? "/usr/sbin/ip";
const sh = (args: string[]) => execFileSync(ip, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const ansi = (s: string) => s.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "");

let marks = 0;
/** A command in the container's shell, answered up to a marker only its output holds. */
async function run(c: TelnetClient, command: string, ms = 20_000): Promise<string> {
  const mark = `mix${++marks}`;
  const from = c.output.length;
  c.send(`${command}; echo "__${mark}"__\r`);
  return ansi(await c.waitFor(new RegExp(`__${mark}__\\r?\\n`), ms, from));
}

describe.skipIf(!ready)("a lab of a container, a cloud, a NAT node, a VPCS and a switch (requires root, dockerd, vpcs, socat, dnsmasq, nftables)", () => {
  let s: TestServer;
  beforeAll(async () => {
    sh(["netns", "add", NS]);
    sh(["link", "add", HOST_END, "type", "veth", "peer", "name", NS_END]);
    sh(["link", "set", NS_END, "netns", NS]);
    sh(["-n", NS, "addr", "add", `${NET}.251/24`, "dev", NS_END]);
    sh(["-n", NS, "link", "set", NS_END, "up"]);
    sh(["link", "set", HOST_END, "up"]);
    s = await startTestServer({ local: true, nat: { natInterface: `pbnone${tag}`, bridge: BRIDGE, subnet: `${NET}.0/24` } });
  });
  afterAll(async () => {
    await s?.close();
    try {
      sh(["netns", "del", NS]);
    } catch {}
    try {
      if (fs.existsSync(`/sys/class/net/${HOST_END}`)) sh(["link", "del", HOST_END]);
    } catch {}
  });

  it("pings across all five, captures the ICMP, and leaves nothing behind when the project closes", async () => {
    const p = (await call(s.url, "POST", "/v2/projects", { name: `mixed-${tag}`, auto_close: false })).body.project_id as string;
    const P = `/v2/projects/${p}`;
    const node = async (body: Record<string, unknown>) => {
      const r = await call(s.url, "POST", `${P}/nodes`, { compute_id: "local", ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    };
    const sw = await node({ name: "SW1", node_type: "ethernet_switch" });
    const pc = await node({ name: "PC1", node_type: "vpcs" });
    const d1 = await node({ name: "D1", node_type: "docker", console_type: "telnet", properties: { image: IMAGE, adapters: 1 } });
    const nat = await node({ name: "NAT1", node_type: "nat" });
    const cloud = await node({ name: "Cloud1", node_type: "cloud", properties: { ports_mapping: [{ name: HOST_END, port_number: 0, type: "ethernet", interface: HOST_END }] } });
    const links: Record<string, string> = {};
    for (const [name, id, port] of [["pc", pc.node_id, 0], ["d1", d1.node_id, 1], ["nat", nat.node_id, 2], ["cloud", cloud.node_id, 3]] as const) {
      const r = await call(s.url, "POST", `${P}/links`, { nodes: [{ node_id: id, adapter_number: 0, port_number: 0 }, { node_id: sw.node_id, adapter_number: 0, port_number: port }] });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      links[name] = r.body.link_id;
    }
    expect((await call(s.url, "POST", `${P}/links/${links.d1}/start_capture`, {})).status).toBe(201);
    const started = await call(s.url, "POST", `${P}/nodes/start`);
    expect([started.status, started.body?.message]).toEqual([204, undefined]);
    const nodes = (await call(s.url, "GET", `${P}/nodes`)).body as { name: string; status: string }[];
    expect(Object.fromEntries(nodes.map((n) => [n.name, n.status]))).toEqual({ SW1: "started", PC1: "started", D1: "started", NAT1: "started", Cloud1: "started" });

    const v = await TelnetClient.connect(pc.console);
    const d = await TelnetClient.connect(d1.console);
    try {
      await v.waitFor(/VPCS> $/);
      // The NAT node's DHCP gives PC1 an address on the NAT subnet, with the NAT bridge as its gateway.
      const lease = await v.run("ip dhcp", 30_000);
      const leased = new RegExp(`DDORA IP (${NET.replaceAll(".", "\\.")}\\.\\d+)/24 GW ${NET.replaceAll(".", "\\.")}\\.1`).exec(lease);
      expect(leased, lease).not.toBeNull();
      const pcIp = leased![1];
      expect((await v.run(`ping ${NET}.1 -c 2`, 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
      // Through the cloud: the namespace behind the host's veth.
      expect((await v.run(`ping ${NET}.251 -c 2`, 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);

      await d.waitFor(/Press RETURN to get started\./, 15_000);
      d.send("\r");
      await d.waitFor(/# /, 15_000);
      await run(d, `ip addr add ${NET}.250/24 dev eth0`);
      expect(await run(d, `ping -c 2 -W 2 ${pcIp}`)).toMatch(/2 packets transmitted, 2 packets received/);
      expect(await run(d, `ping -c 2 -W 2 ${NET}.251`)).toMatch(/2 packets transmitted, 2 packets received/);
      expect(await run(d, `ping -c 2 -W 2 ${NET}.1`)).toMatch(/2 packets transmitted, 2 packets received/);
      expect((await v.run(`ping ${NET}.250 -c 2`, 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
    } finally {
      v.close();
      d.close();
    }

    expect((await call(s.url, "POST", `${P}/links/${links.d1}/stop_capture`, {})).status).toBe(201);
    const captures = path.join(s.dataDir, "projects", p, "project-files", "captures");
    const frames = fs.readdirSync(captures).flatMap((f) => parsePcap(fs.readFileSync(path.join(captures, f))).packets.map((x) => x.data));
    const echoes = icmpEchoes(frames);
    expect(echoes.filter((e) => e.type === 8 && e.src === `${NET}.250`).length).toBeGreaterThanOrEqual(6);
    expect(echoes.filter((e) => e.type === 0 && e.src === `${NET}.251`).length).toBeGreaterThanOrEqual(2);

    expect((await call(s.url, "POST", `${P}/close`, {})).status).toBe(204);
    const docker = new Docker({ socketPath: "/var/run/docker.sock" });
    await waitFor(async () => (await docker.listContainers({ all: true, filters: { label: [`org.patchbay.project=${p}`] } })).length === 0, 15_000, "the container to go");
    await waitFor(() => findOwnedPids(path.resolve(s.dataDir)).length === 0, 15_000, "every node and helper process to end");
    await waitFor(() => !fs.existsSync(`/sys/class/net/${BRIDGE}`), 10_000, "the NAT bridge to go");
  }, 180_000);
});
