import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { PassThrough } from "node:stream";
import path from "node:path";
import { promisify } from "node:util";
import { ConflictError } from "../../platform/core/errors.js";
import type { DockerProperties } from "../node-model/docker-properties.js";
import { DockerTelnetConsole, type ConsoleStream } from "./docker-console.js";
import type { DockerEngine } from "./docker-engine.js";
import { findPython, TAP_BRIDGE_PY } from "./docker-resources.js";
import type { Nio } from "./ethernet.js";
import { findOnPath } from "../../platform/core/executables.js";
import { CONFINED_UID } from "./confinement.js";
import { isAlive, killAndWait, NODE_ENV, OWNER_ENV, writePidFile } from "./processes.js";

const run = promisify(execFile);
const STOP_TIMEOUT_S = 5; // gns3-server's `POST /containers/{id}/stop?t=5`

export interface DockerNodeOptions {
  engine: DockerEngine;
  owner: string;
  runDir: string;
  node: { id: string; name: string; projectId: string };
  containerId: string;
  props: DockerProperties;
  /** Adapter n's UDP NIO (the compute's attachments) and MAC. */
  nics: Nio[];
  macs: string[];
  consoleHost: string;
  console: number | null;
  consoleType: string | null;
  onExit(log: string): void;
}

/**
 * A started docker node (compat-docker §2.3): its container running, each adapter n a TAP moved into the
 * container's network namespace as `eth<n>` (with the port's MAC) and joined to the node's UDP NIO by one helper
 * process (`tap-bridge.py`, run as nobody without capabilities), and the telnet console on the TTY. The container
 * outlives a stop (GNS3 keeps it until the node is deleted or its project closed); the TAPs and helpers do not.
 */
export class DockerNodeProcess {
  commandLine = "";
  running = false;
  private helpers: ChildProcess[] = [];
  private console?: DockerTelnetConsole;
  private aux?: DockerTelnetConsole;
  private http?: net.Server;
  private httpSockets = new Set<net.Socket>();
  private stopping = false;

  constructor(private readonly o: DockerNodeOptions) {}

  get pids(): number[] {
    return this.helpers.map((h) => h.pid!).filter((p) => p !== undefined && isAlive(p));
  }

  private get pidFile(): string {
    return path.join(this.o.runDir, `${this.o.node.id}.json`);
  }

  async start(): Promise<void> {
    const { engine, node } = this.o;
    const c = await engine.container(this.o.containerId);
    const info = await engine.call(() => c.inspect());
    if (info.State.Running) await engine.call(() => c.kill()).catch(() => {}); // a leftover run: its interfaces are gone
    // Attached before the start, so the console keeps the boot output for its first client.
    const stream = (await engine.call(() => c.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true }))) as unknown as ConsoleStream;
    try {
      await engine.call(() => c.start());
      const started = await engine.call(() => c.inspect());
      const pid = started.State.Pid;
      if (!pid) throw new ConflictError(`Docker container '${node.name}' with ID ${this.o.containerId} does not exist or is not ready yet. Please try again in a few seconds.`);
      this.running = true;
      this.commandLine = [...(started.Path ? [started.Path] : []), ...(started.Args ?? [])].join(" ");
      for (let n = 0; n < this.o.props.adapters; n++) await this.plumb(n, pid);
      fs.mkdirSync(this.o.runDir, { recursive: true });
      writePidFile(this.pidFile, { owner: this.o.owner, nodeId: node.id, pids: this.pids, commandLine: this.commandLine });
      if (this.o.consoleType === "telnet" && this.o.console) {
        this.console = new DockerTelnetConsole(node.name, stream, (w, h) => void c.resize({ w, h }).catch(() => {}));
        await this.console.listen(this.o.consoleHost, this.o.console).catch((e: Error) => {
          throw new ConflictError(`Console port ${this.o.console} is already used by another program on this host (${e.message})`);
        });
      } else stream.destroy?.();
      if ((this.o.consoleType === "http" || this.o.consoleType === "https") && this.o.console) await this.startHttpConsole(this.o.console);
      if (this.o.props.aux) await this.startAux(this.o.props.aux);
    } catch (e) {
      stream.destroy?.();
      this.stopping = true;
      // A container that ended during the start: its log says why (GNS3 answers with it too).
      const state = await engine.call(() => c.inspect()).then((i) => i.State, () => undefined);
      if (state && !state.Running) {
        const log = await this.logTail();
        await this.teardown();
        throw new ConflictError(`Docker container '${node.name}' ended during its start (exit code ${state.ExitCode}): ${log || "no output"}`);
      }
      // Else it is killed at once (a stop would wait 5 s for a shell that ignores SIGTERM).
      await engine.call(() => c.kill()).catch(() => {});
      await this.teardown();
      throw e;
    }
    void c.wait().then(
      () => this.ended(),
      () => this.ended(),
    );
  }

  /** A server on a console port, or a 409 naming the port when something else holds it. */
  private async listen(server: net.Server, port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e: Error) => reject(new ConflictError(`Console port ${port} is already used by another program on this host (${e.message})`)));
      server.listen({ host: this.o.consoleHost, port, exclusive: true }, () => resolve());
    });
    server.on("error", () => {});
  }

  /**
   * The http/https console (compat-docker §2.6): each connection to the console port runs `busybox nc 127.0.0.1
   * <console_http_port>` in the container and joins the two, so the web server inside answers (https: the
   * container's own TLS passes through untouched). GNS3 also rewrites `://127.0.0.1` and the inner port in the
   * answers; this forwarder passes the bytes as they are.
   */
  private async startHttpConsole(port: number): Promise<void> {
    const { engine } = this.o;
    const c = await engine.container(this.o.containerId);
    const server = net.createServer((socket) => {
      this.httpSockets.add(socket);
      socket.on("close", () => this.httpSockets.delete(socket));
      socket.on("error", () => {});
      void (async () => {
        try {
          const exec = await engine.call(() =>
            c.exec({ Cmd: ["/gns3/bin/busybox", "nc", "127.0.0.1", String(this.o.props.console_http_port)], AttachStdin: true, AttachStdout: true, AttachStderr: false, Tty: false }),
          );
          const stream = await engine.call(() => exec.start({ hijack: true, stdin: true }));
          const out = new PassThrough();
          c.modem.demuxStream(stream, out, new PassThrough());
          out.pipe(socket);
          socket.pipe(stream);
          stream.on("end", () => socket.end());
          stream.on("error", () => socket.destroy());
          socket.on("close", () => stream.destroy());
        } catch {
          socket.destroy();
        }
      })();
    });
    await this.listen(server, port);
    this.http = server;
  }

  /**
   * The aux console (compat-docker §2.6): a telnet server on the `aux` port joined to one persistent shell run in
   * the container with `exec` (a TTY; the shell is started again when it exits), like gns3-server's
   * `docker exec -it … sh -c 'while true; do TERM=vt100 /gns3/bin/busybox sh; done'`.
   */
  private async startAux(port: number): Promise<void> {
    const { engine } = this.o;
    const c = await engine.container(this.o.containerId);
    const exec = await engine.call(() =>
      c.exec({
        Cmd: ["/gns3/bin/busybox", "sh", "-c", "while true; do TERM=vt100 /gns3/bin/busybox sh; done"],
        AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: true,
      }),
    );
    const stream = (await engine.call(() => exec.start({ hijack: true, stdin: true, Tty: true }))) as unknown as ConsoleStream;
    this.aux = new DockerTelnetConsole(this.o.node.name, stream, (w, h) => void exec.resize({ w, h }).catch(() => {}));
    try {
      await this.aux.listen(this.o.consoleHost, port);
    } catch (e) {
      await this.aux.close();
      this.aux = undefined;
      throw new ConflictError(`Aux console port ${port} is already used by another program on this host (${(e as Error).message})`);
    }
  }

  /** Adapter n: a TAP owned by the helper's user, the helper attached to it, then moved into the container as eth<n>. */
  private async plumb(n: number, pid: number): Promise<void> {
    const tap = `pb${this.o.node.id.replaceAll("-", "").slice(0, 10)}${n.toString(16).padStart(2, "0")}`;
    const ip = findOnPath("ip")!;
    await run(ip, ["link", "del", "dev", tap]).catch(() => {}); // a leftover of this node's last run
    await run(ip, ["tuntap", "add", "dev", tap, "mode", "tap", "user", String(CONFINED_UID), "group", String(CONFINED_UID)]);
    try {
      await run(ip, ["link", "set", "dev", tap, "address", this.o.macs[n]]);
      await this.helper(tap, this.o.nics[n]);
      await run(ip, ["link", "set", "dev", tap, "netns", String(pid), "name", `eth${n}`]);
      await run(findOnPath("nsenter")!, ["-t", String(pid), "-n", ip, "link", "set", `eth${n}`, "up"]);
    } catch (e) {
      await run(ip, ["link", "del", "dev", tap]).catch(() => {});
      const err = e as { stderr?: string; message: string };
      throw new ConflictError(`Cannot give the container of ${this.o.node.name} its interface eth${n}: ${(err.stderr || err.message).trim()}`);
    }
  }

  /** One tap-bridge helper: python3 as nobody, no capabilities, no files (the script comes on the command line). */
  private async helper(tap: string, nio: Nio): Promise<void> {
    const argv = [
      findOnPath("setpriv")!, "--reuid", String(CONFINED_UID), "--regid", String(CONFINED_UID), "--clear-groups",
      "--inh-caps", "-all", "--bounding-set", "-all", "--no-new-privs", "--",
      findPython()!, "-I", "-c", TAP_BRIDGE_PY, tap, String(nio.local), String(nio.remote),
    ];
    const child = spawn(argv[0], argv.slice(1), {
      env: { PATH: "/usr/bin:/bin", [OWNER_ENV]: this.o.owner, [NODE_ENV]: this.o.node.id },
      stdio: ["ignore", "pipe", "pipe"],
      cwd: "/",
    });
    this.helpers.push(child);
    let err = "";
    child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the tap helper did not attach to ${tap} in 10 s`)), 10_000);
      child.stdout!.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the tap helper ended (${code}): ${err}`));
      });
      child.once("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  /** The last lines the container printed (its TTY), or "". */
  private async logTail(): Promise<string> {
    try {
      const buf = (await this.o.engine.call(async () => (await this.o.engine.container(this.o.containerId)).logs({ stdout: true, stderr: true, tail: 20 }))) as unknown as Buffer;
      return buf.toString("utf8").trim();
    } catch {
      return "";
    }
  }

  /** The container ended by itself (its command exited): the node is stopped, and its log says why. */
  private async ended(): Promise<void> {
    if (!this.running || this.stopping) return;
    const log = await this.logTail();
    await this.teardown();
    this.o.onExit(log);
  }

  async suspend(): Promise<void> {
    const c = await this.o.engine.container(this.o.containerId);
    await this.o.engine.call(() => c.pause()).catch((e) => {
      if ((e as { statusCode?: number }).statusCode !== 409) throw e; // already paused
    });
  }

  async resume(): Promise<void> {
    const c = await this.o.engine.container(this.o.containerId);
    const info = await this.o.engine.call(() => c.inspect());
    if (info.State.Paused) await this.o.engine.call(() => c.unpause());
  }

  /** Stop: console closed, the container stopped (SIGTERM, SIGKILL after 5 s, as GNS3), helpers gone. Kept. */
  async stop(): Promise<void> {
    this.stopping = true;
    const c = await this.o.engine.container(this.o.containerId);
    try {
      const info = await this.o.engine.call(() => c.inspect());
      if (info.State.Paused) await this.o.engine.call(() => c.unpause());
      if (info.State.Running) await this.o.engine.call(() => c.stop({ t: STOP_TIMEOUT_S }));
    } catch (e) {
      const status = (e as { statusCode?: number }).statusCode;
      if (status !== 404 && status !== 304) {
        await this.teardown();
        throw e;
      }
    }
    await this.teardown();
  }

  private async teardown(): Promise<void> {
    this.running = false;
    await this.console?.close();
    this.console = undefined;
    await this.aux?.close();
    this.aux = undefined;
    for (const socket of this.httpSockets) socket.destroy();
    const http = this.http;
    this.http = undefined;
    if (http) await new Promise<void>((resolve) => http.close(() => resolve()));
    // The TAPs went with the container's namespace, so the helpers end by themselves; make sure of it.
    await killAndWait(this.pids, this.o.owner, 1000);
    this.helpers = [];
    fs.rmSync(this.pidFile, { force: true });
  }
}
