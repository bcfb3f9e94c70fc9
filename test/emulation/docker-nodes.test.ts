import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOwnedPids } from "../../src/emulation/runtime/processes.js";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs, freeTcpPort } from "../../src/emulation/runtime/vpcs.js";
import { COMPUTE_HOST, twoHosts } from "../support/computes.js";
import { consoleAnswers, icmpEchoes } from "../support/lab.js";
import { call, gql, nodesOf, spawnCliServer, startTestServer, type TestServer } from "../support/server.js";
import { dockerdAnswers, toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Docker nodes through the real server and the host's dockerd (started by .ci/run with scripts/start-dockerd.sh),
 * on the image scripts/build-test-docker-image.sh makes from Debian's busybox-static (no registry).
 */
const docker = new Docker({ socketPath: "/var/run/docker.sock" });
const ready = toolAvailable("dockerd (scripts/start-dockerd.sh)", dockerdAnswers) && toolAvailable("vpcs", findVpcs() !== null);
const IMAGE = ready
  ? execFileSync(path.resolve(import.meta.dirname, "../../scripts/build-test-docker-image.sh"), { encoding: "utf8" }).trim()
  : "patchbay-busybox:latest";

const ansi = (s: string) => s.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "");

async function containersOf(dataDir: string, projectId?: string) {
  const label = [`org.patchbay.owner=${path.resolve(dataDir)}`, ...(projectId ? [`org.patchbay.project=${projectId}`] : [])];
  return docker.listContainers({ all: true, filters: { label } });
}

async function shell(port: number): Promise<TelnetClient> {
  const c = await TelnetClient.connect(port);
  await c.waitFor(/console is now available\.\.\. Press RETURN to get started\./, 10_000);
  c.send("\r");
  await c.waitFor(/# /, 15_000);
  return c;
}

/** Runs a shell command and returns its output: up to a marker only the command's output contains (not its echo). */
let marks = 0;
async function run(c: TelnetClient, command: string, ms = 15_000): Promise<string> {
  const mark = `done${++marks}`;
  const from = c.output.length;
  c.send(`${command}; echo "__${mark}"__\r`);
  return ansi(await c.waitFor(new RegExp(`__${mark}__\\r?\\n`), ms, from));
}

describe.skipIf(!ready)("docker nodes (requires dockerd and vpcs)", () => {
  let s: TestServer;
  let P: string;
  let projectId: string;
  beforeAll(async () => {
    s = await startTestServer();
    const p = await call(s.url, "POST", "/v2/projects", { name: "docker-lab" });
    projectId = p.body.project_id;
    P = `/v2/projects/${projectId}`;
  });
  afterAll(async () => {
    await s?.close();
    expect(await containersOf(s.dataDir)).toEqual([]);
    expect(findOwnedPids(path.resolve(s.dataDir))).toEqual([]);
  });

  it("lists the local images for the GUI's wizard, and docker among the compute's node types", async () => {
    const compute = await call(s.url, "GET", "/v2/compute/docker/images");
    expect(compute.status).toBe(200);
    expect(compute.body).toContainEqual({ image: IMAGE });
    expect(compute.body.map((i: { image: string }) => i.image)).toEqual([...compute.body.map((i: { image: string }) => i.image)].sort());
    const controller = await call(s.url, "GET", "/v2/computes/local/docker/images");
    expect(controller.status).toBe(200);
    expect(controller.body).toEqual(compute.body);
    const q = await gql(s.url, `{ dockerImages(computeId: "local", first: 100) { ... on QueryDockerImagesConnection { edges { node { image } } } } }`);
    expect(nodesOf(q.data.dockerImages)).toEqual(compute.body);
    const local = await call(s.url, "GET", "/v2/computes/local");
    expect(local.body.capabilities.node_types).toContain("docker");
  });

  it("refuses a missing image (409 naming it, no node) and bad properties (400/409)", async () => {
    const missing = await call(s.url, "POST", `${P}/nodes`, {
      name: "DX", node_type: "docker", compute_id: "local", console_type: "telnet", properties: { image: "127.0.0.1:9/patchbay-nosuch:1.0" },
    });
    expect(missing.status).toBe(409);
    expect(missing.body.message).toContain("Could not pull the '127.0.0.1:9/patchbay-nosuch:1.0' image");
    const bad = [
      [{ image: IMAGE, adapters: 100 }, 400],
      [{ image: IMAGE, console_resolution: "big" }, 400],
      [{ image: IMAGE, mac_address: "nope" }, 400],
      [{ image: IMAGE, extra_hosts: "justaname" }, 409],
      [{ image: IMAGE, start_command: 'sh -c "unclosed' }, 409],
      [{ image: IMAGE, extra_volumes: ["bad/rel"] }, 409],
    ] as const;
    for (const [properties, status] of bad) {
      const r = await call(s.url, "POST", `${P}/nodes`, { name: "DX", node_type: "docker", compute_id: "local", properties });
      expect([properties, r.status]).toEqual([properties, status]);
    }
    expect((await call(s.url, "GET", `${P}/nodes`)).body).toEqual([]);
    expect(await containersOf(s.dataDir)).toEqual([]);
  });

  let D1: string;
  let D1Console: number;
  it("creates the container with the node, unprivileged, and the node as GNS3 shows it", async () => {
    const r = await call(s.url, "POST", `${P}/nodes`, {
      name: "D1", node_type: "docker", compute_id: "local", console_type: "telnet",
      properties: { image: IMAGE.replace(/:latest$/, ""), adapters: 2, environment: "FOO=bar baz\nGNS3_X=dropped\nNAME=%vm-name%", extra_hosts: "myhost:10.9.8.7" },
    });
    expect(r.status).toBe(201);
    D1 = r.body.node_id;
    D1Console = r.body.console;
    const hex = D1.replaceAll("-", "");
    const base = `02:42:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
    expect(r.body).toMatchObject({ status: "stopped", console_type: "telnet", node_type: "docker" });
    expect(r.body.properties).toMatchObject({ image: IMAGE, adapters: 2, mac_address: `${base}:00`, start_command: null, console_resolution: "1024x768", extra_volumes: [], usage: "" });
    expect(r.body.properties.container_id).toMatch(/^[a-f0-9]{64}$/);
    expect(r.body.ports.map((p: { name: string; short_name: string; mac_address: string }) => [p.name, p.short_name, p.mac_address])).toEqual([
      ["eth0", "eth0", `${base}:00`],
      ["eth1", "eth1", `${base}:01`],
    ]);
    const info = await docker.getContainer(r.body.properties.container_id).inspect();
    expect(info.Name).toBe(`/GNS3.D1.${projectId}`);
    expect(info.Config.Hostname).toBe("D1");
    expect(info.HostConfig).toMatchObject({ Privileged: false, CapDrop: ["ALL"], CapAdd: ["NET_ADMIN", "NET_RAW"], NetworkMode: "none" });
    expect(info.HostConfig.Binds).toHaveLength(2); // /gns3 read-only and the node's /etc/network
    expect(info.HostConfig.Binds!.every((b) => b.startsWith(path.resolve(s.dataDir)))).toBe(true);
    expect(info.Config.Env).toEqual(expect.arrayContaining(["GNS3_MAX_ETHERNET=eth1", "FOO=bar baz", 'NAME="D1"']));
    expect(info.Config.Env!.some((e) => e.startsWith("GNS3_X"))).toBe(false);
    const files = await call(s.url, "GET", `${P}/nodes/${D1}/files/etc/network/interfaces`);
    expect(files.text).toContain("#iface eth1 inet static");
    // GraphQL: the same settings, typed.
    const q = await gql(s.url, `query($p: ID!) { project(id: $p) { nodes { edges { node { name nodeType settings { ... on DockerSettings { image adapters macAddress environment extraHosts containerId consoleResolution } } } } } } }`, { p: projectId });
    expect(q.errors).toBeUndefined();
    expect(nodesOf(q.data.project.nodes)).toEqual([
      {
        name: "D1",
        nodeType: "DOCKER",
        settings: {
          image: IMAGE, adapters: 2, macAddress: `${base}:00`, environment: "FOO=bar baz\nGNS3_X=dropped\nNAME=%vm-name%", extraHosts: "myhost:10.9.8.7",
          containerId: r.body.properties.container_id, consoleResolution: "1024x768",
        },
      },
    ]);
  });

  it("the GUI's Docker template wizard: the template it posts, and a node from it", async () => {
    const noImage = await call(s.url, "POST", "/v2/templates", { name: "noimage", template_type: "docker", compute_id: "local" });
    expect(noImage.status).toBe(400);
    const t = await call(s.url, "POST", "/v2/templates", {
      default_name_format: "{name}-{0}", usage: "", symbol: ":/symbols/docker_guest.svg", category: 2, start_command: "", name: "patchbay-busybox",
      image: IMAGE, adapters: 1, mac_address: "", custom_adapters: [], environment: "", console_type: "telnet", console_auto_start: false,
      console_resolution: "1024x768", console_http_port: 80, console_http_path: "/", extra_hosts: "", extra_volumes: [], template_type: "docker",
      template_id: "6a2d7c5e-5c8e-4a8c-9d52-0f3c1e0b7a11", compute_id: "local",
    });
    expect(t.status).toBe(201);
    expect(t.body).toMatchObject({ builtin: false, category: "guest", image: IMAGE, template_type: "docker" });
    const n = await call(s.url, "POST", `${P}/templates/${t.body.template_id}`, { x: 10, y: 20, compute_id: "local" });
    expect(n.status).toBe(201);
    expect(n.body).toMatchObject({ name: "patchbay-busybox-1", node_type: "docker", console_type: "telnet", symbol: ":/symbols/docker_guest.svg" });
    expect(n.body.properties).toMatchObject({ image: IMAGE, adapters: 1, environment: null, start_command: null, extra_hosts: null });
    expect((await docker.getContainer(n.body.properties.container_id).inspect()).Name).toBe(`/GNS3.patchbay-busybox-1.${projectId}`);
    expect((await call(s.url, "DELETE", `${P}/nodes/${n.body.node_id}`)).status).toBe(204);
    expect((await call(s.url, "DELETE", `/v2/templates/${t.body.template_id}`)).status).toBe(204);
  });

  it("a container and a VPCS on a switch ping each other, and the capture holds the ICMP", async () => {
    const pc = (await call(s.url, "POST", `${P}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body;
    const sw = (await call(s.url, "POST", `${P}/nodes`, { name: "SW1", node_type: "ethernet_switch", compute_id: "local" })).body;
    const link = async (a: string, b: string, port: number) =>
      (await call(s.url, "POST", `${P}/links`, { nodes: [{ node_id: a, adapter_number: 0, port_number: 0 }, { node_id: b, adapter_number: 0, port_number: port }] })).body;
    const l1 = await link(D1, sw.node_id, 0);
    await link(pc.node_id, sw.node_id, 1);
    expect((await call(s.url, "POST", `${P}/links/${l1.link_id}/start_capture`, {})).status).toBe(201);
    const started = await call(s.url, "POST", `${P}/nodes/start`);
    expect([started.status, started.body?.message]).toEqual([204, undefined]);
    expect((await call(s.url, "GET", `${P}/nodes/${D1}`)).body.status).toBe("started");

    const d = await shell(D1Console);
    const v = await TelnetClient.connect(pc.console);
    try {
      await v.waitFor(/VPCS> $/);
      await v.run("ip 10.7.0.1/24");
      const links = await run(d, "ip link");
      const hex = D1.replaceAll("-", "");
      expect(links).toMatch(new RegExp(`eth0:[^\\n]*\\n\\s*link/ether 02:42:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}:00`));
      expect(links).toContain("eth1");
      expect(links).not.toMatch(/\beth2\b/);
      expect(await run(d, "hostname")).toContain("D1");
      // Only NET_ADMIN (bit 12) and NET_RAW (bit 13), whatever root inside believes.
      expect(await run(d, "grep CapEff /proc/self/status")).toMatch(/CapEff:\s+0000000000003000/);
      expect(await run(d, "grep myhost /etc/hosts")).toContain("10.9.8.7");
      expect(await run(d, "echo $FOO")).toContain("bar baz");
      await run(d, "ip addr add 10.7.0.2/24 dev eth0");
      const out = await run(d, "ping -c 3 -W 2 10.7.0.1", 20_000);
      expect(out).toMatch(/3 packets transmitted, [23] packets received/);
      const back = await v.run("ping 10.7.0.2 -c 2", 20_000);
      expect(back).toMatch(/10\.7\.0\.2 icmp_seq=\d ttl=64/);
    } finally {
      d.close();
      v.close();
    }
    expect((await call(s.url, "POST", `${P}/links/${l1.link_id}/stop_capture`, {})).status).toBe(201);
    const file = (await call(s.url, "GET", `${P}/links/${l1.link_id}`)).body.capture_file_name ?? "";
    const pcap = fs.readFileSync(path.join(s.dataDir, "projects", projectId, "project-files", "captures", file || fs.readdirSync(path.join(s.dataDir, "projects", projectId, "project-files", "captures"))[0]));
    const echoes = icmpEchoes(parsePcap(pcap).packets.map((p) => p.data));
    expect(echoes.filter((e) => e.type === 8 && e.src === "10.7.0.2").length).toBeGreaterThanOrEqual(2);
    expect(echoes.filter((e) => e.type === 0 && e.src === "10.7.0.1").length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("suspend pauses the container, start resumes it; reload gives it its interfaces again", async () => {
    const id = (await call(s.url, "GET", `${P}/nodes/${D1}`)).body.properties.container_id;
    expect((await call(s.url, "POST", `${P}/nodes/${D1}/suspend`)).body.status).toBe("suspended");
    expect((await docker.getContainer(id).inspect()).State.Paused).toBe(true);
    expect((await call(s.url, "POST", `${P}/nodes/${D1}/start`)).body.status).toBe("started");
    expect((await docker.getContainer(id).inspect()).State).toMatchObject({ Paused: false, Running: true });

    expect((await call(s.url, "POST", `${P}/nodes/${D1}/reload`)).body.status).toBe("started");
    const d = await shell(D1Console);
    try {
      expect(await run(d, "ip link")).toMatch(/eth0[\s\S]*eth1/);
    } finally {
      d.close();
    }
  }, 60_000);

  it("stop keeps the container and leaves no helper nor console; a property change makes a new container", async () => {
    const before = (await call(s.url, "GET", `${P}/nodes/${D1}`)).body.properties.container_id;
    expect((await call(s.url, "POST", `${P}/nodes/${D1}/stop`)).body.status).toBe("stopped");
    expect((await docker.getContainer(before).inspect()).State.Running).toBe(false);
    expect(findOwnedPids(path.resolve(s.dataDir), D1)).toEqual([]);
    expect(await consoleAnswers(D1Console)).toBe(false);

    // The GUI sends every property back when its dialog is confirmed: nothing changed, the container stays.
    const all = (await call(s.url, "GET", `${P}/nodes/${D1}`)).body.properties;
    const same = await call(s.url, "PUT", `${P}/nodes/${D1}`, { properties: all });
    expect(same.body.properties.container_id).toBe(before);
    // A change the compute cannot make (an image it cannot have) is refused and changes nothing.
    const refused = await call(s.url, "PUT", `${P}/nodes/${D1}`, { properties: { image: "127.0.0.1:9/patchbay-nosuch:2" } });
    expect(refused.status).toBe(409);
    expect((await call(s.url, "GET", `${P}/nodes/${D1}`)).body.properties).toMatchObject({ image: IMAGE, container_id: before });
    expect((await docker.getContainer(before).inspect()).Id).toBe(before);
    const r = await call(s.url, "PUT", `${P}/nodes/${D1}`, { properties: { environment: "FOO=changed" } });
    expect(r.status).toBe(200);
    expect(r.body.properties.container_id).not.toBe(before);
    expect(r.body.status).toBe("stopped");
    const info = await docker.getContainer(r.body.properties.container_id).inspect();
    expect(info.Config.Env).toContain("FOO=changed");
    await expect(docker.getContainer(before).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(await containersOf(s.dataDir, projectId)).toHaveLength(1);
  }, 30_000);

  it("http console, aux console, and /etc/network/interfaces from the files API applied at boot", async () => {
    const aux = await freeTcpPort();
    const r = await call(s.url, "POST", `${P}/nodes`, {
      name: "WEB", node_type: "docker", compute_id: "local", console_type: "http",
      properties: {
        image: IMAGE, console_http_port: 8080, aux, extra_volumes: ["/etc/udhcpc"],
        start_command: `sh -c "mkdir -p /www && echo hello-from-WEB > /www/index.html && exec httpd -f -p 8080 -h /www"`,
      },
    });
    expect(r.status).toBe(201);
    const N = `${P}/nodes/${r.body.node_id}`;
    // An extra volume starts with the image's files, kept in the node directory.
    expect(fs.readFileSync(path.join(r.body.node_directory, "etc", "udhcpc", "default.script"), "utf8")).toContain("deconfig)");
    const config = "auto eth0\niface eth0 inet static\n\taddress 10.8.0.5\n\tnetmask 255.255.255.0\n";
    expect((await call(s.url, "POST", `${N}/files/etc/network/interfaces`, config)).status).toBe(201);
    expect((await call(s.url, "POST", `${N}/start`)).body.status).toBe("started");
    try {
      const page = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${r.body.console}/`).catch(() => undefined);
        return res?.status === 200 ? res.text() : undefined;
      }, 10_000, "the web server behind the http console");
      expect(page).toContain("hello-from-WEB");
      const a = await shell(aux);
      try {
        expect(await run(a, "hostname")).toContain("WEB");
        expect(await run(a, "ip addr show eth0")).toContain("inet 10.8.0.5/24");
        await run(a, "echo kept > /etc/udhcpc/mine");
      } finally {
        a.close();
      }
      expect(fs.readFileSync(path.join(r.body.node_directory, "etc", "udhcpc", "mine"), "utf8")).toBe("kept\n");
    } finally {
      expect((await call(s.url, "DELETE", N)).status).toBe(204);
    }
    // The runtime follows the node's deletion (node.deleted): its consoles close a moment after the 204.
    await waitFor(async () => !(await consoleAnswers(aux)) && !(await consoleAnswers(r.body.console)), 10_000, "the consoles to close");
  }, 30_000);

  it("a container whose command ends is reported stopped, and starts again", async () => {
    const r = await call(s.url, "POST", `${P}/nodes`, {
      name: "SHORT", node_type: "docker", compute_id: "local", console_type: "none", properties: { image: IMAGE, start_command: "sh -c 'sleep 1; exit 3'" },
    });
    expect(r.status).toBe(201);
    const N = `${P}/nodes/${r.body.node_id}`;
    expect((await call(s.url, "POST", `${N}/start`)).body.status).toBe("started");
    await waitFor(async () => (await call(s.url, "GET", N)).body.status === "stopped", 15_000, "the node to be reported stopped");
    expect(findOwnedPids(path.resolve(s.dataDir), r.body.node_id)).toEqual([]);
    expect((await docker.getContainer(r.body.properties.container_id).inspect()).State.ExitCode).toBe(3);
    expect((await call(s.url, "POST", `${N}/start`)).body.status).toBe("started");
    expect((await call(s.url, "DELETE", N)).status).toBe(204);
  }, 30_000);

  it("duplicate makes its own container; delete and project close remove the containers", async () => {
    const dup = await call(s.url, "POST", `${P}/nodes/${D1}/duplicate`, { x: 50, y: 50 });
    expect(dup.status).toBe(201);
    const original = (await call(s.url, "GET", `${P}/nodes/${D1}`)).body;
    expect(dup.body.properties.container_id).not.toBe(original.properties.container_id);
    expect(dup.body.properties.mac_address).not.toBe(original.properties.mac_address);
    expect((await docker.getContainer(dup.body.properties.container_id).inspect()).Name).toBe(`/GNS3.${dup.body.name}.${projectId}`);
    expect((await call(s.url, "DELETE", `${P}/nodes/${dup.body.node_id}`)).status).toBe(204);
    expect((await call(s.url, "DELETE", `${P}/nodes/${D1}`)).status).toBe(204);
    await waitFor(async () => (await containersOf(s.dataDir, projectId)).length === 0, 10_000, "D1's container to go");
    const d2 = await call(s.url, "POST", `${P}/nodes`, { name: "D2", node_type: "docker", compute_id: "local", console_type: "telnet", properties: { image: IMAGE } });
    expect(d2.status).toBe(201);
    expect((await call(s.url, "POST", `${P}/nodes/${d2.body.node_id}/start`)).body.status).toBe("started");
    expect(findOwnedPids(path.resolve(s.dataDir), d2.body.node_id)).toHaveLength(1);
    expect((await call(s.url, "POST", `${P}/close`)).status).toBe(204);
    await waitFor(async () => (await containersOf(s.dataDir, projectId)).length === 0, 10_000, "the project's containers to go");
    await waitFor(() => findOwnedPids(path.resolve(s.dataDir)).length === 0, 5000, "the helpers to end");
    // Reopened: the node starts again on a new container.
    expect((await call(s.url, "POST", `${P}/open`)).status).toBe(201);
    const started = await call(s.url, "POST", `${P}/nodes/${d2.body.node_id}/start`);
    expect(started.body.status).toBe("started");
    expect(started.body.properties.container_id).not.toBe(d2.body.properties.container_id);
  }, 30_000);
});

describe.skipIf(!ready)("docker nodes on a remote compute (controller → compute API)", () => {
  it("the controller lists the compute's images, and creates, starts and deletes a container there", async () => {
    const { ctl, cmp, compute } = await twoHosts();
    try {
      expect((await call(ctl.url, "GET", "/v2/computes/hostb/docker/images")).body).toContainEqual({ image: IMAGE });
      const p = await call(ctl.url, "POST", "/v2/projects", { name: "remote-docker" });
      const P = `/v2/projects/${p.body.project_id}`;
      const n = await call(ctl.url, "POST", `${P}/nodes`, { name: "RD", node_type: "docker", compute_id: "hostb", console_type: "telnet", properties: { image: IMAGE, adapters: 1 } });
      expect(n.status).toBe(201);
      expect(n.body).toMatchObject({ compute_id: "hostb", console_host: COMPUTE_HOST });
      const there = await containersOf(cmp.dataDir, p.body.project_id);
      expect(there.map((c) => c.Names[0])).toEqual([`/GNS3.RD.${p.body.project_id}`]);
      expect(await containersOf(ctl.dataDir)).toEqual([]);
      expect((await call(ctl.url, "POST", `${P}/nodes/${n.body.node_id}/start`)).body.status).toBe("started");
      const c = await TelnetClient.connect(n.body.console, COMPUTE_HOST);
      try {
        await c.waitFor(/RD console is now available/);
      } finally {
        c.close();
      }
      expect((await call(ctl.url, "DELETE", `${P}/nodes/${n.body.node_id}`)).status).toBe(204);
      await waitFor(async () => (await containersOf(cmp.dataDir)).length === 0, 10_000, "the compute's container to go");
    } finally {
      await ctl.close();
      await cmp.close();
      await compute.drop();
    }
  }, 60_000);
});

describe.skipIf(!ready)("docker nodes: dockerd unreachable", () => {
  it("answers 409 with a clear message, does not offer docker, and keeps serving", async () => {
    const s = await spawnCliServer({ DOCKER_HOST: "unix:///nonexistent/patchbay-docker.sock" });
    try {
      expect((await call(s.url, "GET", "/v2/compute/capabilities")).body.node_types).not.toContain("docker");
      const images = await call(s.url, "GET", "/v2/computes/local/docker/images");
      expect(images.status).toBe(409);
      expect(images.body.message).toMatch(/^Can't connect to Docker daemon \(unix:\/\/\/nonexistent\/patchbay-docker\.sock: No such file or directory\)/);
      const p = await call(s.url, "POST", "/v2/projects", { name: "no-dockerd" });
      const n = await call(s.url, "POST", `/v2/projects/${p.body.project_id}/nodes`, { name: "D", node_type: "docker", compute_id: "local", properties: { image: IMAGE } });
      expect(n.status).toBe(409);
      expect(n.body.message).toMatch(/Docker/);
      expect((await call(s.url, "GET", `/v2/projects/${p.body.project_id}/nodes`)).body).toEqual([]);
      expect((await call(s.url, "GET", "/v2/version")).status).toBe(200);
      const pc = await call(s.url, "POST", `/v2/projects/${p.body.project_id}/nodes`, { name: "PC", node_type: "vpcs", compute_id: "local" });
      expect(pc.status).toBe(201);
    } finally {
      await s.drop();
    }
  }, 60_000);
});

describe.skipIf(!ready)("docker nodes: nothing left when the server ends (requires dockerd)", () => {
  it("SIGTERM removes the containers; after a kill -9 the restarted server removes what was left", async () => {
    const first = await spawnCliServer();
    let second: Awaited<ReturnType<typeof spawnCliServer>> | undefined;
    const owner = path.resolve(first.dataDir);
    try {
      const startOne = async (url: string) => {
        const p = await call(url, "POST", "/v2/projects", { name: `end-${Math.random()}` });
        const n = await call(url, "POST", `/v2/projects/${p.body.project_id}/nodes`, {
          name: "DK", node_type: "docker", compute_id: "local", console_type: "telnet", properties: { image: IMAGE },
        });
        expect(n.status).toBe(201);
        expect((await call(url, "POST", `/v2/projects/${p.body.project_id}/nodes/${n.body.node_id}/start`)).body.status).toBe("started");
        return { projectId: p.body.project_id as string, nodeId: n.body.node_id as string };
      };
      await startOne(first.url);
      expect((await containersOf(first.dataDir)).map((c) => c.State)).toEqual(["running"]);
      expect(findOwnedPids(owner)).toHaveLength(1); // the adapter's helper

      first.child.kill("SIGKILL");
      await new Promise((r) => first.child.once("exit", r));
      // The helper dies with the server (parent-death signal); the container outlives it until the restart.
      await waitFor(() => findOwnedPids(owner).length === 0, 5000, "the helper to die with the server");
      expect(await containersOf(first.dataDir)).toHaveLength(1);
      second = await spawnCliServer({}, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
      // The restart sweeps the leftover once listening; a node made and started right away waits for the sweep, so
      // its own container is not swept with the leftover.
      const again = await startOne(second.url);
      expect((await containersOf(first.dataDir)).map((c) => c.Labels["org.patchbay.project"])).toEqual([again.projectId]);
      second.child.kill("SIGTERM");
      await new Promise((r) => second!.child.once("exit", r));
      expect(second.child.exitCode).toBe(0);
      expect(await containersOf(first.dataDir)).toEqual([]);
      expect(findOwnedPids(owner)).toEqual([]);
    } finally {
      await second?.drop();
      await first.drop();
      for (const c of await containersOf(first.dataDir)) await docker.getContainer(c.Id).remove({ force: true });
    }
  }, 90_000);
});
