import path from "node:path";
import type { Node } from "../../../generated/prisma-sqlite/client.js";
import { ConflictError } from "../../../platform/core/errors.js";
import { dockerPropertiesSchema, prepareDockerProperties, type DockerProperties } from "../../node-model/docker-properties.js";
import { nodeAdapter, readCustomAdapters } from "../../node-model/adapters.js";
import { nodeProperties } from "../../node-model/serialize.js";
import { DockerEngine, LABEL_NODE, LABEL_OWNER } from "../docker-engine.js";
import { DockerNodeProcess } from "../docker-node.js";
import { findPython, findStaticBusybox, writeDockerResources } from "../docker-resources.js";
import { findOnPath } from "../../../platform/core/executables.js";
import type { NodeArtifacts, ProcessDriver } from "./driver.js";

/**
 * Docker: one container per node in the host's dockerd (docker-engine.ts), created with the node and removed with
 * it; a start runs it and gives it eth0..N joined to the links (docker-node.ts), with a telnet console on its TTY.
 * Suspend pauses the container. The Engine client is this driver's (one per server process, like the driver).
 */
export const dockerEngine = new DockerEngine();

/** Host programs a start needs besides dockerd: the TAPs and the namespace move, the helper, the init's busybox. */
const TOOLS: [string, string][] = [
  ["ip", "iproute2"],
  ["nsenter", "util-linux"],
  ["setpriv", "util-linux"],
];

const dockerProps = (node: Pick<Node, "id" | "propertiesJson">): DockerProperties =>
  prepareDockerProperties(node.id, nodeProperties(node));

/** The keys GNS3's docker compute object and create body carry. */
const DOCKER_KEYS = Object.keys(dockerPropertiesSchema.shape).filter((k) => k !== "custom_adapters");
let lastProbe = 0;

const artifacts: NodeArtifacts = {
  async provision(node, env) {
    const props = dockerProps(node);
    const id = await dockerEngine.create({
      owner: env.owner,
      node,
      props,
      workdir: env.workdir,
      projectDir: path.dirname(path.dirname(path.dirname(env.workdir))),
      resources: writeDockerResources(env.owner),
    });
    return { container_id: id };
  },
  // Every docker property reaches the container's configuration, and its name carries the node's.
  needsNew: (keys, renamed) => renamed || keys.some((k) => DOCKER_KEYS.includes(k) && k !== "container_id" && k !== "usage"),
  // Nothing to remove where no dockerd was ever set up (no socket): hosts without docker log nothing at each close.
  remove: async (owner, scope) => (dockerEngine.present() ? dockerEngine.remove(owner, scope) : 0),
};

export const dockerDriver = {
  nodeType: "docker" as const,
  runs: "process",
  consoles: { types: ["telnet", "vnc", "http", "https", "none"], default: "telnet" },
  udpOffsets: [0],
  suspends: true,
  artifacts,

  unavailable(node) {
    if (process.getuid?.() !== 0) {
      return `Node ${node.name} cannot start: docker nodes need the server to run as root (it gives each container its interfaces as TAPs moved into the container's namespace)`;
    }
    for (const [tool, pkg] of TOOLS) if (!findOnPath(tool)) return `Node ${node.name} cannot start: ${tool} is not installed on this host (Debian package ${pkg})`;
    if (!findPython()) return `Node ${node.name} cannot start: python3 is not installed on this host (Debian package python3), the tap helper needs it`;
    if (!findStaticBusybox()) {
      return "No busybox executable could be found, please install busybox (apt install busybox-static on Debian/Ubuntu) and make sure it is in your PATH";
    }
    return null;
  },
  // Offered when dockerd answered (asked again in the background at most every 10 s).
  listedWhen: () => {
    if (Date.now() - lastProbe > 10_000) {
      lastProbe = Date.now();
      void dockerEngine.ping();
    }
    return dockerEngine.reachable;
  },
  prepareProperties: async (_ctx, node, merged) => ({ ...merged, ...prepareDockerProperties(node.id, merged) }),
  adaptersAtStart: (node) => dockerProps(node).adapters,
  memoryMb: () => 0,

  async start(node, launch) {
    const props = dockerProps(node);
    if (node.consoleType === "vnc") {
      // GNS3 runs an X VNC server on the host for the container's display: not done here (no X server is given to
      // containers); GNS3's message when it lacks TigerVNC, and this compute's otherwise.
      if (!findOnPath("Xtigervnc") && !findOnPath("Xvnc")) throw new ConflictError("Please install TigerVNC server before using VNC support");
      throw new ConflictError(`Node ${node.name}: the vnc console of docker nodes is not served by this compute (use telnet, http, https or none)`);
    }
    // The container: the recorded one when it is still there and ours, else made again (a crash, a project reopened).
    let containerId = props.container_id;
    let recorded: Record<string, unknown> | undefined;
    const existing = containerId ? await dockerEngine.call((d) => d.getContainer(containerId!).inspect()).catch(() => undefined) : undefined;
    if (!existing || existing.Config.Labels?.[LABEL_OWNER] !== launch.owner || existing.Config.Labels?.[LABEL_NODE] !== node.id) {
      recorded = await artifacts.provision(node, { ctx: launch.ctx, owner: launch.owner, workdir: launch.workdir });
      containerId = recorded.container_id as string;
    }
    const custom = readCustomAdapters(node.customAdapters);
    const macs = Array.from({ length: props.adapters }, (_, n) => nodeAdapter({ id: node.id, nodeType: node.nodeType, properties: props as never }, custom, n).macAddress!);
    const proc = new DockerNodeProcess({
      engine: dockerEngine,
      owner: launch.owner,
      runDir: launch.runDir,
      node,
      containerId: containerId!,
      props,
      nics: launch.nics,
      macs,
      consoleHost: launch.ctx.config.host,
      console: node.console,
      consoleType: node.consoleType,
      onExit: (log) => launch.onExit(handle, log),
    });
    const handle = Object.assign(proc, { recorded });
    await proc.start();
    return handle;
  },

  computeView: (properties) => {
    const p = properties as Partial<DockerProperties>;
    return {
      usage: p.usage ?? "",
      container_id: p.container_id ?? null,
      image: p.image,
      adapters: p.adapters ?? 1,
      mac_address: p.mac_address,
      console_resolution: p.console_resolution ?? "1024x768",
      console_http_port: p.console_http_port ?? 80,
      console_http_path: p.console_http_path ?? "/",
      aux: p.aux ?? null,
      start_command: p.start_command ?? null,
      environment: p.environment ?? null,
      extra_hosts: p.extra_hosts ?? null,
      extra_volumes: p.extra_volumes ?? [],
    };
  },
  remoteCreate: async (_ctx, node) => computeApiProperties(nodeProperties(node)),
  remoteSettings: (properties) => computeApiProperties(properties),
} satisfies ProcessDriver;

/** The docker properties the compute API takes; the other compute makes its own container (container_id is its). */
const computeApiProperties = (properties: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(properties).filter(([k, v]) => DOCKER_KEYS.includes(k) && k !== "container_id" && v !== null && v !== ""));
