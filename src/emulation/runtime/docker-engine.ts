import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import { ConflictError } from "../../platform/core/errors.js";
import {
  checkVolume,
  environmentLines,
  extraHosts,
  splitCommand,
  type DockerProperties,
} from "../node-model/docker-properties.js";

/**
 * The host's dockerd through its Engine API (dockerode over the unix socket, or `DOCKER_HOST`): images, and the
 * containers of docker nodes — created, found and removed by their labels, so that a restarted server finds what a
 * previous run of the same data directory left. Every failure is a 409 in GNS3's words.
 */
export const LABEL_OWNER = "org.patchbay.owner";
export const LABEL_PROJECT = "org.patchbay.project";
export const LABEL_NODE = "org.patchbay.node";

const SOCKET = "/var/run/docker.sock";
/** Docker's rule for container names. */
const CONTAINER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;
const PULL_TIMEOUT_MS = 120_000;

interface DockerError extends Error {
  statusCode?: number;
  code?: string;
  json?: { message?: string } | null;
  reason?: string;
}

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: "No such file or directory",
  ECONNREFUSED: "Connection refused",
  EACCES: "Permission denied",
  ETIMEDOUT: "Connection timed out",
};

export class DockerEngine {
  /**
   * dockerode, loaded on the first call: with its SSH, gRPC and protobuf dependencies it is ~200 modules that a
   * server without docker nodes never needs (issue 24: nothing only a first request needs is loaded at start).
   */
  private docker?: Promise<Docker>;
  private readonly host = process.env.DOCKER_HOST;
  private readonly where: string;
  /** Whether dockerd answered at least once (GNS3 words the first failure differently). */
  private reached = false;
  /** The last answer: dockerd reachable or not (capabilities list docker only when it is). */
  reachable = false;

  constructor() {
    this.where = this.host ?? `unix socket ${SOCKET}`;
  }

  private client(): Promise<Docker> {
    return (this.docker ??= import("dockerode").then(({ default: Docker }) =>
      this.host ? new Docker() : new Docker({ socketPath: SOCKET }),
    ));
  }

  /** Whether a dockerd may be there at all: `DOCKER_HOST` set, or the default socket exists. */
  present(): boolean {
    return Boolean(process.env.DOCKER_HOST) || fs.existsSync(SOCKET);
  }

  /** Runs one Engine API call; connection failures and API errors become GNS3's 409s. */
  async call<T>(fn: (d: Docker) => Promise<T>): Promise<T> {
    try {
      const out = await fn(await this.client());
      this.reached = this.reachable = true;
      return out;
    } catch (e) {
      throw this.error(e as DockerError);
    }
  }

  private error(e: DockerError): Error {
    if (e instanceof ConflictError) return e;
    if (e.code && !e.statusCode) {
      this.reachable = false;
      if (!this.reached) return new ConflictError(`Can't connect to Docker daemon (${this.where}: ${ERRNO_TEXT[e.code] ?? e.code}); is dockerd running?`);
      return new ConflictError(`Docker has returned an error: Cannot connect to ${this.where} [${ERRNO_TEXT[e.code] ?? e.code}]`);
    }
    this.reached = this.reachable = true;
    const message = e.json?.message ?? e.reason ?? e.message;
    return Object.assign(new ConflictError(`Docker has returned an error: ${e.statusCode ?? ""} ${String(message).trim()}`), { statusCode: e.statusCode });
  }

  /** Asks dockerd whether it answers (at start-up and for the capabilities); never throws. */
  async ping(): Promise<boolean> {
    try {
      await this.call(async (d) => {
        await d.ping({ abortSignal: AbortSignal.timeout(3000) } as never);
      });
    } catch {
      this.reachable = false;
    }
    return this.reachable;
  }

  /** GET /v2/compute/docker/images: every tag of the local images but `<none>:<none>`, sorted. */
  async images(): Promise<{ image: string }[]> {
    const list = await this.call((d) => d.listImages({ all: false }));
    const tags = list.flatMap((i) => i.RepoTags ?? []).filter((t) => t !== "<none>:<none>");
    return [...new Set(tags)].sort().map((image) => ({ image }));
  }

  /** The image's config; pulled first when missing (GNS3 does), a 409 naming it when it cannot be had. */
  async image(name: string): Promise<Docker.ImageInspectInfo> {
    const inspect = () => this.call((d) => d.getImage(name).inspect());
    try {
      return await inspect();
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode !== 404) throw e;
    }
    try {
      await this.call(async (d) => {
        const stream = await d.pull(name, { abortSignal: AbortSignal.timeout(PULL_TIMEOUT_MS) });
        await new Promise<void>((resolve, reject) => d.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve())));
      });
    } catch (e) {
      throw new ConflictError(
        `Could not pull the '${name}' image from Docker repository, please check your Internet connection (original error: ${(e as Error).message})`,
      );
    }
    return inspect();
  }

  /** The containers of this data directory (optionally: of one project or node), running or not. */
  async containers(owner: string, scope: { projectId?: string; nodeId?: string } = {}): Promise<Docker.ContainerInfo[]> {
    const label = [`${LABEL_OWNER}=${owner}`];
    if (scope.projectId) label.push(`${LABEL_PROJECT}=${scope.projectId}`);
    if (scope.nodeId) label.push(`${LABEL_NODE}=${scope.nodeId}`);
    return this.call((d) => d.listContainers({ all: true, filters: { label } }));
  }

  /** Removes them (force: a running one is killed; its anonymous volumes go with it). */
  async remove(owner: string, scope: { projectId?: string; nodeId?: string } = {}): Promise<number> {
    const found = await this.containers(owner, scope);
    for (const c of found) {
      await this.call((d) => d.getContainer(c.Id).remove({ force: true, v: true })).catch((e) => {
        if ((e as { statusCode?: number }).statusCode !== 404) throw e;
      });
    }
    return found.length;
  }

  async container(id: string): Promise<Docker.Container> {
    return (await this.client()).getContainer(id);
  }

  /**
   * An extra volume starts with the image's files, as GNS3's init copies them at the first start. An unprivileged
   * container cannot bind-mount, so the copy is made once, by a short-lived container of the same image: the image's
   * `<path>` copied (`cp -a`) into the node directory's, bound at `/gns3volumes<path>` — inside a container, so
   * whatever the image holds (links, odd owners) lands only in that bind. Then the directory is marked seeded.
   */
  private async seedVolumes(spec: ContainerSpec, volumes: string[]): Promise<void> {
    const todo = volumes.filter((v) => !fs.existsSync(path.join(spec.workdir, v, SEEDED)));
    if (!todo.length) return;
    const script = 'for v in "$@"; do if [ -d "$v" ]; then /gns3/bin/busybox cp -a "$v/." "/gns3volumes$v/" || exit 1; fi; done';
    const seed = await this.call((d) =>
      d.createContainer({
        Image: spec.props.image,
        User: "root",
        Entrypoint: ["/gns3/bin/busybox", "sh", "-c", script, "seed"],
        Cmd: todo,
        NetworkDisabled: true,
        Labels: { [LABEL_OWNER]: spec.owner, [LABEL_PROJECT]: spec.node.projectId, [LABEL_NODE]: spec.node.id },
        HostConfig: {
          Privileged: false,
          CapDrop: ["ALL"],
          CapAdd: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID"], // cp -a keeps owners and modes
          SecurityOpt: ["no-new-privileges"],
          NetworkMode: "none",
          Binds: [`${spec.resources}:/gns3:ro`, ...todo.map((v) => `${path.join(spec.workdir, v)}:/gns3volumes${v}`)],
        },
      }),
    );
    try {
      await this.call(() => seed.start());
      const result = (await this.call(() => seed.wait({ abortSignal: AbortSignal.timeout(SEED_TIMEOUT_MS) }) as Promise<{ StatusCode?: number }>)) ?? {};
      if (result.StatusCode !== 0) {
        const log = (await this.call(() => seed.logs({ stdout: true, stderr: true, tail: 5 })).catch(() => Buffer.alloc(0))) as unknown as Buffer;
        throw new ConflictError(`The image's files of ${todo.join(", ")} could not be copied into the node directory: ${log.toString("utf8").trim()}`);
      }
    } finally {
      await this.call(() => seed.remove({ force: true, v: true })).catch(() => {});
    }
    for (const v of todo) fs.writeFileSync(path.join(spec.workdir, v, SEEDED), "");
  }

  /**
   * Creates the node's container (compat-docker §2.2), replacing any container this data directory has for the
   * node: `GNS3.<name>.<project>`, hostname the node name, TTY and open stdin, no Docker network (the compute gives
   * it eth0..N at start), `/gns3/init.sh` in front of the command. Not privileged: every capability dropped but
   * NET_ADMIN and NET_RAW (SETUID/SETGID too when the image runs as another user, for the init to become it),
   * no-new-privileges, binds only the node directory's volumes and the read-only resources.
   */
  async create(spec: ContainerSpec): Promise<string> {
    const { node, props } = spec;
    const name = `GNS3.${node.name}.${node.projectId}`;
    if (!CONTAINER_NAME.test(name)) {
      throw new ConflictError(`Docker has returned an error: 400 Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    }
    if (spec.projectDir.includes(":")) throw new ConflictError("Cannot create a Docker container with a project directory containing a colon character (':')");
    const image = await this.image(props.image);
    const config = image.Config ?? ({} as Docker.ImageInspectInfo["Config"]);
    const entrypoint = config.Entrypoint ? (Array.isArray(config.Entrypoint) ? config.Entrypoint : [config.Entrypoint]) : [];
    const cmd = props.start_command ? splitCommand(props.start_command) : config.Cmd?.length ? config.Cmd : entrypoint.length ? [] : ["/bin/sh"];
    const hosts = props.extra_hosts ? extraHosts(props.extra_hosts) : [];
    const volumes = persistentVolumes(props.extra_volumes);
    const user = config.User && config.User !== "root" && config.User !== "0" ? config.User : undefined;
    for (const v of volumes) fs.mkdirSync(path.join(spec.workdir, v), { recursive: true });
    writeNetworkSample(spec.workdir, node.name, props.adapters);

    await this.remove(spec.owner, { nodeId: node.id });
    await this.seedVolumes(spec, volumes.filter((v) => v !== "/etc/network"));
    // A container of that name left by something else (another server, a crash before labels existed) is not ours.
    const clash = await this.call((d) => d.listContainers({ all: true, filters: { name: [`^/${name.replaceAll(".", "\\.")}$`] } }));
    if (clash.length) throw new ConflictError(`Docker has returned an error: 409 Conflict. The container name "/${name}" is already in use by container "${clash[0].Id}"`);

    const env = [
      "container=docker",
      `GNS3_MAX_ETHERNET=eth${props.adapters - 1}`,
      `GNS3_VOLUMES=${volumes.join(":")}`,
      ...(user ? [`GNS3_USER=${user}`] : []),
      ...environmentLines(props.environment, node),
      // The init writes them into /etc/hosts (Docker's ExtraHosts does nothing without a Docker network).
      ...(hosts.length ? [`GNS3_EXTRA_HOSTS=${hosts.map((h) => { const [host, ip] = h.split(":"); return `${ip}\t${host}`; }).join("\n")}`] : []),
    ];
    const created = await this.call((d) =>
      d.createContainer({
        name,
        Hostname: node.name.slice(0, 63),
        Image: props.image,
        Tty: true,
        OpenStdin: true,
        StdinOnce: false,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        NetworkDisabled: true,
        User: "root",
        Entrypoint: ["/gns3/init.sh", ...entrypoint],
        Cmd: cmd,
        Env: env,
        Labels: { [LABEL_OWNER]: spec.owner, [LABEL_PROJECT]: node.projectId, [LABEL_NODE]: node.id },
        HostConfig: {
          Privileged: false,
          CapDrop: ["ALL"],
          CapAdd: ["NET_ADMIN", "NET_RAW", ...(user ? ["SETUID", "SETGID"] : [])],
          SecurityOpt: ["no-new-privileges"],
          NetworkMode: "none",
          // Ports below 1024 (a web server for the http console) without CAP_NET_BIND_SERVICE: a sysctl of its own namespace.
          Sysctls: { "net.ipv4.ip_unprivileged_port_start": "0" },
          Binds: [`${spec.resources}:/gns3:ro`, ...volumes.map((v) => `${path.join(spec.workdir, v)}:${v}`)],
          RestartPolicy: { Name: "no" },
          LogConfig: { Type: "json-file", Config: { "max-size": "1m", "max-file": "1" } },
        },
      }),
    );
    return created.id;
  }
}

/** Marks a volume directory of the node directory as holding the image's files already (GNS3's file name). */
const SEEDED = ".gns3_perms";
const SEED_TIMEOUT_MS = 60_000;

export interface ContainerSpec {
  owner: string;
  node: { id: string; name: string; projectId: string };
  props: DockerProperties;
  /** The node directory: its volumes live under it. */
  workdir: string;
  projectDir: string;
  /** `<dataDir>/resources/docker`, bound read-only at /gns3. */
  resources: string;
}

/** /etc/network and the extra volumes; one nested inside another is dropped (the more general one wins). */
export function persistentVolumes(extra: string[]): string[] {
  const all = ["/etc/network", ...extra.map((v) => v.replace(/\/+$/, ""))];
  for (const v of extra) checkVolume(v);
  const unique = [...new Set(all)];
  return unique.filter((v) => !unique.some((o) => o !== v && v.startsWith(`${o}/`)));
}

/** GNS3's `etc/network` of a new node: the ifupdown directories and a commented sample `interfaces` (kept if present). */
function writeNetworkSample(workdir: string, nodeName: string, adapters: number): void {
  const dir = path.join(workdir, "etc", "network");
  for (const d of ["if-up.d", "if-down.d", "if-pre-up.d", "if-post-down.d", "interfaces.d"]) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const file = path.join(dir, "interfaces");
  if (fs.existsSync(file)) return;
  let text = "#\n# This is a sample network config, please uncomment lines to configure the network\n#\n\n";
  text += "# Uncomment this line to load custom interface files\n# source /etc/network/interfaces.d/*\n";
  for (let n = 0; n < adapters; n++) {
    text += `\n# Static config for eth${n}\n#auto eth${n}\n#iface eth${n} inet static\n#\taddress 192.168.${n}.2\n#\tnetmask 255.255.255.0\n#\tgateway 192.168.${n}.1\n#\tup echo nameserver 192.168.${n}.1 > /etc/resolv.conf\n`;
    text += `\n# DHCP config for eth${n}\n#auto eth${n}\n#iface eth${n} inet dhcp\n#\thostname ${nodeName}\n`;
  }
  fs.writeFileSync(file, text);
}
