import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findOnPath } from "../../src/platform/core/executables.js";
import { hostLinkUnavailable } from "../../src/emulation/runtime/host-link.js";
import { natUnavailable } from "../../src/emulation/runtime/nat-network.js";
import { findOwnedPids, isAlive } from "../../src/emulation/runtime/processes.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { call, gql, spawnCliServer, startTestServer, type TestServer } from "../support/server.js";
import { step } from "../support/steps.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 21, points 2 and 3: cloud and NAT nodes on real host networking. The test makes its own network namespace
 * with a veth pair (the cloud binds the host end; the namespace is the "network outside"), and each NAT server gets
 * its own bridge name and subnet (Patchbay's own NAT bridge: dnsmasq + nftables). Traffic only ever goes to
 * addresses inside this machine (the namespace and the bridges). Every test checks that nothing is left: socat and
 * dnsmasq processes (found by the runtime's markers), TAPs, bridges, nftables tables.
 */
/** Lab steps wait on real processes (vpcs, DHCP, pings): generous on a loaded machine, still bounded. */
const LAB_TIMEOUT = 90_000;
const NAT_DEFAULTS = { natInterface: "virbr0", bridge: "pbnat0", subnet: "192.168.122.0/24" };
const root = process.getuid?.() === 0;
const ready =
  toolAvailable("vpcs", findVpcs() !== null) &&
  toolAvailable("ip (iproute2)", findOnPath("ip") !== null || fs.existsSync("/usr/sbin/ip")) &&
  toolAvailable("ping (iputils-ping: the namespace pings the lab)", findOnPath("ping") !== null) &&
  toolAvailable("root (cloud and NAT nodes open host interfaces)", root) &&
  toolAvailable("socat and setpriv", hostLinkUnavailable("") === null) &&
  toolAvailable("dnsmasq and nft (dnsmasq-base, nftables)", natUnavailable(NAT_DEFAULTS) === null);
if (!ready) console.warn("cloud-nat.test.ts: skipped (needs root, vpcs, iproute2, iputils-ping, socat, util-linux setpriv, dnsmasq-base, nftables)");

const tag = randomBytes(3).toString("hex");
const NS = `pbtest-${tag}`;
const HOST_END = `pbv${tag}`; // the cloud binds it
const NS_END = `pbn${tag}`;
const rand = (n: number) => 1 + (randomBytes(1)[0] % n);
const CLOUD_NET = `10.${200 + rand(50)}.${rand(250)}`; // the namespace: .2, the vpcs: .1
// "The outside" of the NAT: a second namespace behind a veth, 10.a.b.1 on the host end, .2 inside. It has no route
// to the NAT subnet, so only masqueraded packets (from the host's .1) can be answered.
const WAN_NS = `pbwan-${tag}`;
const WAN_HOST = `pbw${tag}`;
const WAN_NET = `10.${100 + rand(49)}.${rand(250)}`;
const natNet = () => `10.${150 + rand(49)}.${rand(250)}`; // one per server
const ip = findOnPath("ip") ?? "/usr/sbin/ip";
function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(" ")} failed: ${stdout ?? ""} ${stderr ?? ""}`);
  }
}
const exists = (iface: string) => fs.existsSync(`/sys/class/net/${iface}`);
const nftTables = () => sh(findOnPath("nft") ?? "/usr/sbin/nft", ["list", "tables"]);
const promiscuity = (iface: string) => Number(/promiscuity (\d+)/.exec(sh(ip, ["-d", "link", "show", iface]))?.[1]);
/** TAPs this server's NAT/cloud ports made (`pbt…`), enslaved to a bridge. */
const tapsOn = (bridge: string) => {
  try {
    return fs.readdirSync(`/sys/class/net/${bridge}/brif`);
  } catch {
    return []; // no bridge, or one being made: the kernel adds its brif directory a moment after the device
  }
};

async function newProject(url: string, name: string): Promise<string> {
  const r = await call(url, "POST", "/v2/projects", { name: `${name}-${tag}`, auto_close: false });
  expect(r.status).toBe(201);
  return r.body.project_id;
}

async function node(url: string, P: string, body: Record<string, unknown>) {
  const r = await call(url, "POST", `/v2/projects/${P}/nodes`, { compute_id: "local", ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

const link = (url: string, P: string, a: string, b: string) =>
  call(url, "POST", `/v2/projects/${P}/links`, {
    nodes: [
      { node_id: a, adapter_number: 0, port_number: 0 },
      { node_id: b, adapter_number: 0, port_number: 0 },
    ],
  });

async function vpcsConsole(url: string, P: string, id: string): Promise<TelnetClient> {
  expect((await call(url, "POST", `/v2/projects/${P}/nodes/${id}/start`)).status).toBe(200);
  const c = await TelnetClient.connect((await call(url, "GET", `/v2/projects/${P}/nodes/${id}`)).body.console);
  await c.waitFor(/VPCS> $/);
  return c;
}

/** The runtime's helper processes of a server (socat, dnsmasq), by the marker it gives them. */
const cmdline = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1");
  } catch {
    return "";
  }
};
const helpers = (dataDir: string) => findOwnedPids(path.resolve(dataDir)).filter((p) => /socat|dnsmasq/.test(cmdline(p)));
/** A helper once it runs its program (setpriv has exec'd socat). */
const execd = (pid: number, name: string) => {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, "utf8").startsWith(`Name:\t${name}\n`);
  } catch {
    return false;
  }
};

/** A failed test's leftovers: this test's own NAT bridge and its table, when a server could not take them down. */
function removeBridge(bridge: string) {
  try {
    if (nftTables().includes(`patchbay_${bridge}`)) sh(findOnPath("nft") ?? "/usr/sbin/nft", ["delete", "table", "ip", `patchbay_${bridge}`]);
    if (exists(bridge)) sh(ip, ["link", "del", bridge]);
  } catch {}
}

/** Nothing of a NAT server's network is left: no bridge, no nftables table, no TAP, no helper process. */
async function nothingLeft(dataDir: string, bridge: string) {
  await waitFor(() => helpers(dataDir).length === 0, 10_000, "socat and dnsmasq to end").catch((e) => {
    throw new Error(`${e.message}: ${helpers(dataDir).map((p) => cmdline(p).replaceAll("\0", " ")).join(" | ")}`);
  });
  // The bridge and its rules go right after its dnsmasq.
  await waitFor(() => !exists(bridge) && !nftTables().includes(`patchbay_${bridge}`), 5000, `the bridge ${bridge} and its table to go`);
  await waitFor(() => tapsOn(bridge).length === 0, 5000, "no TAP left on the bridge");
}

describe.skipIf(!ready)("cloud and NAT nodes on real host networking (requires root, vpcs, socat, dnsmasq, nftables)", () => {
  beforeAll(() => {
    sh(ip, ["netns", "add", NS]);
    sh(ip, ["link", "add", HOST_END, "type", "veth", "peer", "name", NS_END]);
    sh(ip, ["link", "set", NS_END, "netns", NS]);
    sh(ip, ["-n", NS, "addr", "add", `${CLOUD_NET}.2/24`, "dev", NS_END]);
    sh(ip, ["-n", NS, "link", "set", NS_END, "up"]);
    sh(ip, ["-n", NS, "link", "set", "lo", "up"]);
    sh(ip, ["link", "set", HOST_END, "up"]);
    sh(ip, ["netns", "add", WAN_NS]);
    sh(ip, ["link", "add", WAN_HOST, "type", "veth", "peer", "name", `pbx${tag}`]);
    sh(ip, ["link", "set", `pbx${tag}`, "netns", WAN_NS]);
    sh(ip, ["-n", WAN_NS, "addr", "add", `${WAN_NET}.2/24`, "dev", `pbx${tag}`]);
    sh(ip, ["-n", WAN_NS, "link", "set", `pbx${tag}`, "up"]);
    sh(ip, ["addr", "add", `${WAN_NET}.1/24`, "dev", WAN_HOST]);
    sh(ip, ["link", "set", WAN_HOST, "up"]);
  });
  afterAll(() => {
    for (const ns of [NS, WAN_NS]) {
      try {
        sh(ip, ["netns", "del", ns]); // takes its veth pair with it
      } catch {}
    }
    try {
      if (exists(HOST_END)) sh(ip, ["link", "del", HOST_END]);
    } catch {}
  });

  describe("in local mode", () => {
    let s: TestServer;
    const bridge = `pbnat${tag}`;
    const net = natNet();
    let P: string;
    beforeAll(async () => {
      s = await startTestServer({ local: true, nat: { natInterface: `pbnone${tag}`, bridge, subnet: `${net}.0/24` } });
      P = await newProject(s.url, "cloudnat");
    });
    // A failed test leaves no node behind to fail the tests after it: its nodes are deleted (their ports with them).
    afterEach(async () => {
      for (const p of (await call(s.url, "GET", "/v2/projects")).body as { project_id: string; status: string }[]) {
        if (p.status !== "opened") continue;
        for (const n of (await call(s.url, "GET", `/v2/projects/${p.project_id}/nodes`)).body as { node_id: string }[]) {
          await call(s.url, "DELETE", `/v2/projects/${p.project_id}/nodes/${n.node_id}`);
        }
      }
    }, LAB_TIMEOUT);
    afterAll(async () => {
      await s?.close();
      try {
        if (s) await nothingLeft(s.dataDir, bridge);
      } finally {
        removeBridge(bridge);
      }
    }, LAB_TIMEOUT);

    it("lists the host's interfaces as GNS3 does, on the compute and through the controller", async () => {
      const tap = `tap${tag}`;
      sh(ip, ["tuntap", "add", tap, "mode", "tap"]);
      try {
        const r = await call(s.url, "GET", "/v2/compute/network/interfaces");
        expect(r.status).toBe(200);
        const names = r.body.map((i: { name: string }) => i.name);
        expect(names).toEqual([...names].sort((a: string, b: string) => a.localeCompare(b)));
        expect(r.body.find((i: { name: string }) => i.name === HOST_END)).toEqual({
          id: HOST_END,
          name: HOST_END,
          ip_address: "",
          mac_address: fs.readFileSync(`/sys/class/net/${HOST_END}/address`, "utf8").trim(),
          netmask: "",
          special: false,
          type: "ethernet",
        });
        expect(r.body.find((i: { name: string }) => i.name === "lo")).toMatchObject({ ip_address: "127.0.0.1", netmask: "255.0.0.0", special: true, type: "ethernet" });
        // A TAP that is down and has no address is listed too, as type tap.
        expect(r.body.find((i: { name: string }) => i.name === tap)).toMatchObject({ ip_address: "", special: false, type: "tap" });
        const viaController = await call(s.url, "GET", "/v2/computes/local/network/interfaces");
        expect(viaController.status).toBe(200);
        // (Interfaces come and go with other programs on this host: compare the ones this test owns.)
        expect(viaController.body).toContainEqual(r.body.find((i: { name: string }) => i.name === HOST_END));
        expect(viaController.body).toContainEqual(r.body.find((i: { name: string }) => i.name === tap));
      } finally {
        sh(ip, ["link", "del", tap]);
      }
    });

    it("a cloud from the built-in template gets a port per non-special host interface, as GNS3's", async () => {
      const r = await call(s.url, "POST", `/v2/projects/${P}/templates/39e257dc-8412-3174-b6b3-0ee3ed6a43e9`, { x: 0, y: 0, compute_id: "local" });
      expect(r.status).toBe(201);
      const listed = (await call(s.url, "GET", "/v2/compute/network/interfaces")).body as { name: string; special: boolean }[];
      expect(r.body).toMatchObject({ name: "Cloud1", node_type: "cloud", status: "started", console: null, symbol: ":/symbols/cloud.svg" });
      // (Other programs on this host may add or remove interfaces meanwhile: compare with what both lists agree on.)
      const mapped = (r.body.properties.ports_mapping as { interface: string; name: string; port_number: number; type: string }[]).map((m) => m.interface);
      expect(mapped).toContain(HOST_END);
      expect(mapped).toEqual([...mapped].sort((a, b) => a.localeCompare(b)));
      expect(listed.filter((i) => mapped.includes(i.name)).every((i) => !i.special)).toBe(true);
      expect(listed.filter((i) => i.special).map((i) => i.name)).not.toContain(mapped[0]);
      expect(r.body.properties.ports_mapping).toEqual(mapped.map((name, n) => ({ interface: name, name, port_number: n, type: "ethernet" })));
      expect(r.body.ports.map((p: { name: string }) => p.name)).toEqual(mapped);
      expect(mapped).not.toContain("lo");
      expect(r.body.properties).toMatchObject({ remote_console_host: "", remote_console_port: 23, remote_console_type: "none", remote_console_http_path: "/" });
      expect(helpers(s.dataDir)).toEqual([]); // nothing bound before a link
      await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${r.body.node_id}`);
    });

    it("lists cloud and nat in the capabilities", async () => {
      const caps = await call(s.url, "GET", "/v2/computes/local");
      expect(caps.body.capabilities.node_types).toEqual(expect.arrayContaining(["cloud", "nat"]));
    });

    it("a cloud on the host end of a veth joins a vpcs to the namespace: pings both ways, then lets go", async () => {
      const cloud = await node(s.url, P, {
        name: "Cloud1",
        node_type: "cloud",
        properties: { ports_mapping: [{ name: "veth", port_number: 3, type: "ethernet", interface: HOST_END }] },
      });
      await step("the cloud is GNS3's: started at once, its port from the mapping (renumbered), live interfaces, console defaults", async () => {
        expect(cloud.status).toBe("started");
        expect(cloud.console).toBeNull();
        expect(cloud.node_directory).toBeNull();
        expect(cloud.ports).toEqual([
          { adapter_number: 0, data_link_types: { Ethernet: "DLT_EN10MB" }, link_type: "ethernet", name: "veth", port_number: 0, short_name: "veth" },
        ]);
        expect(cloud.properties).toMatchObject({
          ports_mapping: [{ interface: HOST_END, name: "veth", port_number: 0, type: "ethernet" }],
          remote_console_host: "",
          remote_console_port: 23,
          remote_console_type: "none",
          remote_console_http_path: "/",
        });
        expect(cloud.properties.interfaces).toContainEqual({ name: HOST_END, special: false, type: "ethernet" });
      });
      await step("GraphQL: the same cloud, typed, and the host interfaces", async () => {
        const r = await gql(
          s.url,
          `query($n: ID!) { emulatedNode(id: $n) { ... on EmulatedNode { nodeType
            settings { __typename ... on CloudSettings { ports { name portNumber type interface localPort } remoteConsole { host port type httpPath } } ... on NatSettings { ports { name } } } } }
            hostInterfaces { name type special ipAddress } }`,
          { n: cloud.node_id },
        );
        expect(r.errors).toBeUndefined();
        expect(r.data.emulatedNode).toEqual({
          nodeType: "CLOUD",
          settings: {
            __typename: "CloudSettings",
            ports: [{ name: "veth", portNumber: 0, type: "ETHERNET", interface: HOST_END, localPort: null }],
            remoteConsole: { host: "", port: 23, type: "NONE", httpPath: "/" },
          },
        });
        expect(r.data.hostInterfaces).toContainEqual({ name: HOST_END, type: "ETHERNET", special: false, ipAddress: null });
      });
      const pc = await node(s.url, P, { name: "PC1", node_type: "vpcs" });
      const l = await link(s.url, P, cloud.node_id, pc.node_id);
      expect(l.status).toBe(201);
      const socat = await waitFor(() => helpers(s.dataDir).find((p) => execd(p, "socat")), 10_000, "the cloud port's socat");
      await step("the port's socat runs as nobody with CAP_NET_RAW and CAP_NET_ADMIN only, the interface promiscuous while it runs", async () => {
        const status = fs.readFileSync(`/proc/${socat}/status`, "utf8");
        expect(status).toMatch(/^Uid:\s+65534\s/m);
        expect(/^CapEff:\s+(\w+)/m.exec(status)![1]).toBe("0000000000003000");
        expect(/^CapBnd:\s+(\w+)/m.exec(status)![1]).toBe("0000000000003000");
        // The link answers once socat's packet socket is bound; its promiscuous membership is waited for, so that a
        // socat slow to set it fails here, with this message, rather than in the pings below
        await waitFor(() => promiscuity(HOST_END) === 1, 10_000, "the interface promiscuous");
      });
      const c = await vpcsConsole(s.url, P, pc.node_id);
      try {
        await c.run(`ip ${CLOUD_NET}.1/24`);
        await step("vpcs → namespace", async () => {
          expect((await c.run(`ping ${CLOUD_NET}.2 -c 2`, 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
        });
        await step("namespace → vpcs", async () => {
          // Not execFileSync: the server runs in this process, and its link relay must keep forwarding meanwhile.
          const { stdout } = await promisify(execFile)(ip, ["netns", "exec", NS, "ping", "-c", "2", "-W", "2", `${CLOUD_NET}.1`]);
          expect(stdout).toMatch(/2 received/);
        });
      } finally {
        c.close();
      }
      await step("changing a connected cloud's mapping is refused, as GNS3", async () => {
        const r = await call(s.url, "PUT", `/v2/projects/${P}/nodes/${cloud.node_id}`, {
          properties: { ports_mapping: [{ name: "x", port_number: 0, type: "ethernet", interface: "lo" }] },
        });
        expect(r.status).toBe(409);
        expect(r.body.message).toBe("Cannot modify a cloud that is already connected.");
      });
      await step("stop and suspend change nothing (the cloud stays started and bound); reload has nothing to do", async () => {
        for (const action of ["stop", "suspend"]) {
          const r = await call(s.url, "POST", `/v2/projects/${P}/nodes/${cloud.node_id}/${action}`);
          expect(r.status).toBe(200);
          expect(r.body.status).toBe("started");
        }
        expect(helpers(s.dataDir)).toEqual([socat]);
      });
      await step("deleting the link ends the socat and the promiscuous membership", async () => {
        expect((await call(s.url, "DELETE", `/v2/projects/${P}/links/${l.body.link_id}`)).status).toBe(204);
        const pidFile = path.join(s.dataDir, "run", `${cloud.node_id}.port0.json`);
        await waitFor(() => !isAlive(socat) && !fs.existsSync(pidFile), 10_000, "socat and its pid file to go");
        expect(promiscuity(HOST_END)).toBe(0);
      });
      await step("linked again, then the cloud deleted: nothing left", async () => {
        expect((await link(s.url, P, cloud.node_id, pc.node_id)).status).toBe(201);
        const again = await waitFor(() => helpers(s.dataDir)[0], 10_000, "socat again");
        expect((await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${cloud.node_id}`)).status).toBe(204);
        await waitFor(() => !isAlive(again), 10_000, "socat to end with its node");
      });
      await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${pc.node_id}`);
    }, LAB_TIMEOUT);

    it("a NAT node from the built-in template gives a vpcs a DHCP lease and a gateway that answers; the bridge goes with the last link", async () => {
      const r = await call(s.url, "POST", `/v2/projects/${P}/templates/df8f4ea9-33b7-3e96-86a2-c39bc9bb649c`, { x: 100, y: 0, compute_id: "local" });
      expect(r.status).toBe(201);
      const nat = r.body;
      expect(nat).toMatchObject({
        name: "NAT1",
        node_type: "nat",
        status: "started",
        console: null,
        console_type: null,
        node_directory: null,
        symbol: ":/symbols/nat.svg",
        ports: [{ adapter_number: 0, data_link_types: { Ethernet: "DLT_EN10MB" }, link_type: "ethernet", name: "nat0", port_number: 0, short_name: "nat0" }],
        properties: { ports_mapping: [{ interface: bridge, name: "nat0", port_number: 0, type: "ethernet" }] },
      });
      expect(exists(bridge)).toBe(false); // made on demand
      const forwarding = fs.readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8");
      const pc = await node(s.url, P, { name: "PC2", node_type: "vpcs" });
      const l = await link(s.url, P, nat.node_id, pc.node_id);
      expect(l.status).toBe(201);
      await waitFor(() => tapsOn(bridge).length === 1, 10_000, "the NAT port's TAP on the bridge");
      expect(nftTables()).toContain(`table ip patchbay_${bridge}`);
      const dnsmasq = await waitFor(() => helpers(s.dataDir).find((p) => execd(p, "dnsmasq")), 10_000, "dnsmasq");
      const status = fs.readFileSync(`/proc/${dnsmasq}/status`, "utf8");
      expect(status).toMatch(/^Uid:\s+65534\s/m);
      expect(/^CapBnd:\s+(\w+)/m.exec(status)![1]).toBe("0000000000003400"); // NET_BIND_SERVICE, NET_ADMIN, NET_RAW
      const c = await vpcsConsole(s.url, P, pc.node_id);
      try {
        const lease = await c.run("ip dhcp", 30_000);
        expect(lease).toMatch(new RegExp(`DDORA IP ${net.replaceAll(".", "\\.")}\\.\\d+/24 GW ${net.replaceAll(".", "\\.")}\\.1`));
        const shown = await c.run("show ip");
        expect(shown).toMatch(new RegExp(`DHCP SERVER : ${net.replaceAll(".", "\\.")}\\.1`));
        expect((await c.run(`ping ${net}.1 -c 2`, 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
        // Beyond the gateway, masqueraded: the "outside" namespace answers the host's address, not the lab's.
        await step("a host beyond the NAT answers (masquerading, forwarding)", async () => {
          expect((await c.run(`ping ${WAN_NET}.2 -c 2`, 20_000)).match(/icmp_seq=\d ttl=63/g)).toHaveLength(2);
        });
      } finally {
        c.close();
      }
      await step("reload is a no-op for a NAT node; it stays started", async () => {
        expect((await call(s.url, "POST", `/v2/projects/${P}/nodes/${nat.node_id}/stop`)).body.status).toBe("started");
      });
      await step("the last NAT link gone: TAP, dnsmasq, rules and bridge go", async () => {
        expect((await call(s.url, "DELETE", `/v2/projects/${P}/links/${l.body.link_id}`)).status).toBe(204);
        await nothingLeft(s.dataDir, bridge);
        expect(fs.readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8")).toBe(forwarding); // as it was
      });
      await step("a NAT—cloud link is refused, as GNS3", async () => {
        const cloud = await node(s.url, P, { name: "CloudN", node_type: "cloud", properties: { ports_mapping: [{ name: "v", port_number: 0, type: "ethernet", interface: HOST_END }] } });
        const bad = await link(s.url, P, nat.node_id, cloud.node_id);
        expect(bad.status).toBe(409);
        expect(bad.body.message).toBe("Connecting a nat to a cloud is not allowed");
        await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${cloud.node_id}`);
      });
      await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${pc.node_id}`);
      await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${nat.node_id}`);
    }, LAB_TIMEOUT);

    it("an interface that goes away under a linked cloud: its port ends; start answers GNS3's 409 naming it, and joins it again once it is back", async () => {
      const dummy = `pbd${tag}`; // a veth pair (no dummy module here); deleting one end deletes both
      sh(ip, ["link", "add", dummy, "type", "veth", "peer", "name", `pbe${tag}`]);
      try {
        sh(ip, ["link", "set", dummy, "up"]);
        const cloud = await node(s.url, P, { name: "CloudD", node_type: "cloud", properties: { ports_mapping: [{ name: "d", port_number: 0, type: "ethernet", interface: dummy }] } });
        const pc = await node(s.url, P, { name: "PC4", node_type: "vpcs" });
        const l = await link(s.url, P, cloud.node_id, pc.node_id);
        expect(l.status).toBe(201);
        const runtime = s.ctx.services.emulation.runtime;
        await waitFor(() => runtime.snapshot().links.includes(l.body.link_id), 10_000, "the link wired");
        const first = await waitFor(() => helpers(s.dataDir).find((p) => execd(p, "socat")), 10_000, "the port's socat");
        sh(ip, ["link", "del", dummy]);
        await waitFor(() => !isAlive(first), 10_000, "socat to end with its interface");
        const start = await call(s.url, "POST", `/v2/projects/${P}/nodes/${cloud.node_id}/start`);
        expect(start.status).toBe(409);
        expect(start.body.message).toBe(`Interface '${dummy}' could not be found on this system, please update 'CloudD'`);
        sh(ip, ["link", "add", dummy, "type", "veth", "peer", "name", `pbe${tag}`]);
        sh(ip, ["link", "set", dummy, "up"]);
        const again = await call(s.url, "POST", `/v2/projects/${P}/nodes/${cloud.node_id}/start`);
        expect([again.status, again.body.status]).toEqual([200, "started"]);
        const second = await waitFor(() => helpers(s.dataDir).find((p) => execd(p, "socat")), 10_000, "a new socat");
        expect(second).not.toBe(first);
        expect(promiscuity(dummy)).toBe(1);
        await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${cloud.node_id}`);
        await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${pc.node_id}`);
        await waitFor(() => helpers(s.dataDir).length === 0, 10_000, "nothing left");
      } finally {
        if (exists(dummy)) sh(ip, ["link", "del", dummy]);
      }
    }, LAB_TIMEOUT);

    it("opening a project whose cloud's interface is gone wires its other links all the same; a start wires the cloud's once it is back", async () => {
      const gone = `pbg${tag}`;
      sh(ip, ["link", "add", gone, "type", "veth", "peer", "name", `pbh${tag}`]);
      try {
        await reopenWithout(gone);
      } finally {
        if (exists(gone)) sh(ip, ["link", "del", gone]);
      }
    }, LAB_TIMEOUT);

    async function reopenWithout(gone: string) {
      const Q = await newProject(s.url, "reopen");
      const cloud = await node(s.url, Q, { name: "C", node_type: "cloud", properties: { ports_mapping: [{ name: "g", port_number: 0, type: "ethernet", interface: gone }] } });
      const a = await node(s.url, Q, { name: "A", node_type: "vpcs" });
      const sw = await node(s.url, Q, { name: "SW", node_type: "ethernet_switch" });
      const b = await node(s.url, Q, { name: "B", node_type: "vpcs" });
      expect((await link(s.url, Q, cloud.node_id, a.node_id)).status).toBe(201);
      const other = await link(s.url, Q, b.node_id, sw.node_id);
      expect(other.status).toBe(201);
      // Closed at once, while the cloud port's socat may still be starting: the close waits for it and ends it.
      expect((await call(s.url, "POST", `/v2/projects/${Q}/close`)).status).toBe(204);
      expect(helpers(s.dataDir).map(cmdline)).toEqual([]);
      sh(ip, ["link", "del", gone]);
      expect((await call(s.url, "POST", `/v2/projects/${Q}/open`)).status).toBe(201);
      const runtime = s.ctx.services.emulation.runtime;
      await waitFor(() => runtime.snapshot().links.includes(other.body.link_id), 10_000, "the switch link wired on open");
      expect(helpers(s.dataDir).map(cmdline)).toEqual([]);
      const cloudLink = (await call(s.url, "GET", `/v2/projects/${Q}/links`)).body.find((x: { link_id: string }) => x.link_id !== other.body.link_id);
      expect(runtime.snapshot().links).not.toContain(cloudLink.link_id);
      // The interface back, a start of the cloud wires its link (GNS3's start re-adds the cloud's NIOs).
      sh(ip, ["link", "add", gone, "type", "veth", "peer", "name", `pbh${tag}`]);
      try {
        expect((await call(s.url, "POST", `/v2/projects/${Q}/nodes/${cloud.node_id}/start`)).status).toBe(200);
        expect(runtime.snapshot().links).toContain(cloudLink.link_id);
        expect(helpers(s.dataDir).filter((p) => /socat/.test(cmdline(p)))).toHaveLength(1);
      } finally {
        await call(s.url, "DELETE", `/v2/projects/${Q}`);
      }
      await waitFor(() => helpers(s.dataDir).length === 0, 10_000, "nothing left");
    }

    it("refuses a port on an interface that does not exist at the link (409, GNS3's message) and bad mappings (400)", async () => {
      const cloud = await node(s.url, P, {
        name: "CloudM",
        node_type: "cloud",
        properties: { ports_mapping: [{ name: "gone", port_number: 0, type: "ethernet", interface: `pbno${tag}` }] },
      });
      const pc = await node(s.url, P, { name: "PC3", node_type: "vpcs" });
      const l = await link(s.url, P, cloud.node_id, pc.node_id);
      expect(l.status).toBe(409);
      expect(l.body.message).toBe(`Interface 'pbno${tag}' could not be found on this system, please update 'CloudM'`);
      // Nothing is linked, so nothing is bound: a start has nothing to do (as upstream, whose start adds linked ports only).
      expect((await call(s.url, "POST", `/v2/projects/${P}/nodes/${cloud.node_id}/start`)).status).toBe(200);
      for (const ports_mapping of [
        [{ name: "x", port_number: 0, type: "ethernet", interface: "../../etc" }],
        [{ name: "x", port_number: 0, type: "bogus", interface: "lo" }],
        [{ name: "x", port_number: 0, type: "udp", lport: 0, rhost: "127.0.0.1", rport: 1 }],
        // Names and hosts reach socat's address syntax: its separators and quotes are refused.
        [{ name: "x", port_number: 0, type: "ethernet", interface: "lo,fork" }],
        [{ name: "x", port_number: 0, type: "tap", interface: "tap'0" }],
        [{ name: "x", port_number: 0, type: "udp", lport: 9, rhost: "127.0.0.1:7,fork", rport: 7 }],
      ]) {
        const bad = await call(s.url, "POST", `/v2/projects/${P}/nodes`, { name: "CloudB", node_type: "cloud", compute_id: "local", properties: { ports_mapping } });
        expect(bad.status, JSON.stringify(ports_mapping)).toBe(400);
      }
      expect(helpers(s.dataDir)).toEqual([]);
      await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${cloud.node_id}`);
      await call(s.url, "DELETE", `/v2/projects/${P}/nodes/${pc.node_id}`);
    });

    it("closing the project ends its cloud and NAT ports and takes the NAT bridge down", async () => {
      const Q = await newProject(s.url, "closing");
      const cloud = await node(s.url, Q, { name: "C", node_type: "cloud", properties: { ports_mapping: [{ name: "v", port_number: 0, type: "ethernet", interface: HOST_END }] } });
      const nat = await node(s.url, Q, { name: "N", node_type: "nat" });
      const a = await node(s.url, Q, { name: "A", node_type: "vpcs" });
      const b = await node(s.url, Q, { name: "B", node_type: "vpcs" });
      expect((await link(s.url, Q, cloud.node_id, a.node_id)).status).toBe(201);
      expect((await link(s.url, Q, nat.node_id, b.node_id)).status).toBe(201);
      await waitFor(() => helpers(s.dataDir).length === 3 && tapsOn(bridge).length === 1, 10_000, "two socats and dnsmasq");
      expect((await call(s.url, "POST", `/v2/projects/${Q}/close`)).status).toBe(204);
      await nothingLeft(s.dataDir, bridge);
      await call(s.url, "DELETE", `/v2/projects/${Q}`);
    }, LAB_TIMEOUT);
  });

  describe("on a host with libvirt's bridge (emulated as in the reference: a bridge and a DHCP server of the test's)", () => {
    let s: TestServer;
    const virbr = `pbvb${tag}`;
    const net = natNet();
    let dhcp: ReturnType<typeof spawn> | undefined;
    beforeAll(async () => {
      sh(ip, ["link", "add", virbr, "type", "bridge"]);
      sh(ip, ["addr", "add", `${net}.1/24`, "dev", virbr]);
      sh(ip, ["link", "set", virbr, "up"]);
      dhcp = spawn(findOnPath("dnsmasq") ?? "/usr/sbin/dnsmasq", [
        "--keep-in-foreground", "--conf-file=/dev/null", "--port=0", `--interface=${virbr}`, "--bind-dynamic", "--leasefile-ro", "--pid-file=",
        `--dhcp-range=${net}.2,${net}.254,255.255.255.0,1h`,
      ], { stdio: "ignore" });
      s = await startTestServer({ local: true, nat: { natInterface: virbr, bridge: `pbnav${tag}`, subnet: `${natNet()}.0/24` } });
    }, LAB_TIMEOUT);
    afterAll(async () => {
      await s?.close();
      dhcp?.kill("SIGKILL");
      if (exists(virbr)) sh(ip, ["link", "del", virbr]);
    });

    it("a NAT node joins that bridge as GNS3 does, adds no bridge, DHCP or rules of its own, and leaves the host's bridge", async () => {
      const P = await newProject(s.url, "virbr");
      const nat = await node(s.url, P, { name: "NAT1", node_type: "nat" });
      expect(nat.properties.ports_mapping).toEqual([{ interface: virbr, name: "nat0", port_number: 0, type: "ethernet" }]);
      const pc = await node(s.url, P, { name: "PC1", node_type: "vpcs" });
      const l = await link(s.url, P, nat.node_id, pc.node_id);
      expect(l.status).toBe(201);
      await waitFor(() => tapsOn(virbr).length === 1, 10_000, "the NAT port's TAP on the host's bridge");
      expect(exists(`pbnav${tag}`)).toBe(false);
      expect(nftTables()).not.toContain(`patchbay_pbnav${tag}`);
      expect(helpers(s.dataDir).filter((p) => /dnsmasq/.test(cmdline(p)))).toEqual([]);
      const c = await vpcsConsole(s.url, P, pc.node_id);
      try {
        expect(await c.run("ip dhcp", 30_000)).toMatch(new RegExp(`DDORA IP ${net.replaceAll(".", "\\.")}\\.\\d+/24`));
        expect((await c.run(`ping ${net}.1 -c 1`, 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(1);
      } finally {
        c.close();
      }
      expect((await call(s.url, "DELETE", `/v2/projects/${P}/links/${l.body.link_id}`)).status).toBe(204);
      await waitFor(() => tapsOn(virbr).length === 0 && helpers(s.dataDir).length === 0, 10_000, "the TAP and its socat to go");
      expect(exists(virbr)).toBe(true); // the host's bridge is not Patchbay's to remove
    }, LAB_TIMEOUT);
  });

  it("a NAT link is refused (409) when Patchbay's bridge could not be made: its subnet overlaps the host's, its name is taken", async () => {
    for (const [nat, message] of [
      [{ natInterface: `pbnone${tag}`, bridge: `pbnao${tag}`, subnet: `${WAN_NET}.0/24` }, `NAT subnet ${WAN_NET}.0/24 overlaps this host's network ${WAN_NET}.1/24 (choose another with --nat-subnet)`],
      [{ natInterface: `pbnone${tag}`, bridge: HOST_END, subnet: `${natNet()}.0/24` }, `Cannot make the NAT bridge ${HOST_END}: an interface of that name exists and is not this server's (choose another with --nat-bridge)`],
    ] as const) {
      const s = await startTestServer({ local: true, nat });
      try {
        const P = await newProject(s.url, "natclash");
        const n = await node(s.url, P, { name: "NAT1", node_type: "nat" });
        const pc = await node(s.url, P, { name: "PC1", node_type: "vpcs" });
        const l = await link(s.url, P, n.node_id, pc.node_id);
        expect([l.status, l.body.message]).toEqual([409, message]);
        expect(helpers(s.dataDir)).toEqual([]);
      } finally {
        await s.close();
      }
      expect(exists(HOST_END)).toBe(true); // an interface that is not Patchbay's is left alone
    }
  }, LAB_TIMEOUT);

  describe("outside local mode", () => {
    let s: TestServer;
    let P: string;
    beforeAll(async () => {
      s = await startTestServer({ local: false, nat: { natInterface: `pbnone${tag}`, bridge: `pbnaf${tag}`, subnet: `${natNet()}.0/24` } });
      P = await newProject(s.url, "notlocal");
    });
    afterAll(() => s?.close());

    it("refuses to bind host interfaces: the link answers 403 naming local mode, start 409; nothing is bound", async () => {
      const cloud = await node(s.url, P, { name: "Cloud1", node_type: "cloud", properties: { ports_mapping: [{ name: "v", port_number: 0, type: "ethernet", interface: HOST_END }] } });
      const nat = await node(s.url, P, { name: "NAT1", node_type: "nat" });
      const a = await node(s.url, P, { name: "A", node_type: "vpcs" });
      const b = await node(s.url, P, { name: "B", node_type: "vpcs" });
      const lc = await link(s.url, P, cloud.node_id, a.node_id);
      expect(lc.status).toBe(403);
      expect(lc.body.message).toBe("Cloud Cloud1 binds host interfaces, which this server allows only in local mode (PATCHBAY_LOCAL=1, the operator's opt-in)");
      const ln = await link(s.url, P, nat.node_id, b.node_id);
      expect(ln.status).toBe(403);
      expect(ln.body.message).toMatch(/^NAT NAT1 joins the lab to this host's network, which this server allows only in local mode/);
      const start = await call(s.url, "POST", `/v2/projects/${P}/nodes/${cloud.node_id}/start`);
      expect(start.status).toBe(409);
      expect(start.body.message).toMatch(/only in local mode/);
      expect(helpers(s.dataDir)).toEqual([]);
      expect(promiscuity(HOST_END)).toBe(0);
    });
  });

  describe("when the server ends", () => {
    /** A CLI server (a process of its own) with a cloud and a NAT node linked to vpcs nodes. */
    async function labServer(bridge: string, shared?: { databaseUrl: string; dataDir: string }) {
      const env = { PATCHBAY_LOCAL: "1", PATCHBAY_NAT_INTERFACE: `pbnone${tag}`, PATCHBAY_NAT_BRIDGE: bridge, PATCHBAY_NAT_SUBNET: `${natNet()}.0/24` };
      const srv = await spawnCliServer(env, shared);
      return srv;
    }
    async function lab(url: string) {
      const P = await newProject(url, `end-${randomBytes(2).toString("hex")}`);
      const cloud = await node(url, P, { name: "C", node_type: "cloud", properties: { ports_mapping: [{ name: "v", port_number: 0, type: "ethernet", interface: HOST_END }] } });
      const nat = await node(url, P, { name: "N", node_type: "nat" });
      const a = await node(url, P, { name: "A", node_type: "vpcs" });
      const b = await node(url, P, { name: "B", node_type: "vpcs" });
      expect((await link(url, P, cloud.node_id, a.node_id)).status).toBe(201);
      expect((await link(url, P, nat.node_id, b.node_id)).status).toBe(201);
      return P;
    }
    const exited = (child: { exitCode: number | null; signalCode: string | null }) => child.exitCode !== null || child.signalCode !== null;

    it("SIGTERM: the server takes down its socats, TAPs, dnsmasq, rules and bridge before it exits", async () => {
      const bridge = `pbnas${tag}`;
      const srv = await labServer(bridge);
      try {
        await lab(srv.url);
        await waitFor(() => helpers(srv.dataDir).length === 3 && tapsOn(bridge).length === 1, 15_000, "the lab's helpers");
        srv.child.kill("SIGTERM");
        await waitFor(() => exited(srv.child), 15_000, "the server to exit");
        await nothingLeft(srv.dataDir, bridge);
      } finally {
        await srv.drop();
        removeBridge(bridge);
      }
    }, LAB_TIMEOUT);

    it("kill -9: socats, dnsmasq and TAPs die with the server; the restart removes the old rules and bridge", async () => {
      const bridge = `pbnak${tag}`;
      const first = await labServer(bridge);
      let second: Awaited<ReturnType<typeof labServer>> | undefined;
      try {
        await lab(first.url);
        await waitFor(() => helpers(first.dataDir).length === 3 && tapsOn(bridge).length === 1, 15_000, "the lab's helpers");
        const before = helpers(first.dataDir);
        first.child.kill("SIGKILL");
        await waitFor(() => exited(first.child), 10_000, "the server to die");
        // The kernel ends the socats and dnsmasq (parent-death signal); the TAPs go with them. The rules and the
        // bridge stay until the next start of this data directory.
        await waitFor(() => helpers(first.dataDir).length === 0, 10_000, "socat and dnsmasq to die with the server");
        await waitFor(() => tapsOn(bridge).length === 0, 5000, "the kernel to remove the TAP of the dead socat");
        expect(exists(bridge)).toBe(true);
        expect(nftTables()).toContain(`patchbay_${bridge}`);
        second = await labServer(bridge, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
        // Started: the old processes are gone (a re-opened project may wire its links anew, with new ones).
        expect(before.filter(isAlive)).toEqual([]);
        second.child.kill("SIGTERM");
        await waitFor(() => exited(second!.child), 15_000, "the restarted server to exit");
        await nothingLeft(first.dataDir, bridge);
      } finally {
        await second?.drop();
        await first.drop();
        removeBridge(bridge); // only when a step above failed before the restart took it down
      }
    }, LAB_TIMEOUT);
  });
});
