import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { anyOf } from "../../platform/events.js";
import { allProjectsTopic, controllerTopic } from "../core/events.js";
import { nodeProperties } from "../node-model/serialize.js";
import { driverFor, hasConsole, processTypes, runnableTypesInWords, runsProcess } from "../runtime/drivers/registry.js";
import type { Compute, RunState } from "../runtime/compute.js";
import type { ExternalEnd, LocalCompute } from "../runtime/local/manager.js";
import { WebSocket } from "ws";
import { computeJson, computeTarget, computeUrl, type ComputeTarget } from "../computes/client.js";
import { LOCAL_ID } from "../computes/model.js";
import type { ComputeMonitor } from "../computes/monitor.js";

/**
 * Nodes on remote computes (GNS3's controller/compute split). The controller's database stays the source of
 * truth; a remote node also exists on its compute (created through the compute API) and runs there. Links
 * that touch one are relayed by this server (the local runtime's LinkTunnel, so filters, suspend and capture
 * work): the remote side of the relay is a UDP NIO on the compute's node port pointing back at us.
 * Node and project operations command it (place, the Compute interface, settingsChanged, removeNode,
 * releaseProject); it follows the bus only as an observer: connection changes from the compute monitor
 * (compute.updated), and project.closed/deleted to forget what it knew of the project. A lost compute's nodes are shown
 * stopped; on (re)connection its nodes are re-created if it forgot them, their status is read back and their
 * links re-wired. While connected, the status of started nodes is polled, so a node that dies there shows.
 */
const STATUS_POLL_MS = 2_000;
/** Tear-down calls to a compute that may be gone must not hold the runtime's per-link queue for long. */
const TEARDOWN_TIMEOUT_MS = 3_000;

const nodeRoute = (node: Pick<Node, "projectId" | "nodeType" | "id">) => `/v2/compute/projects/${node.projectId}/${node.nodeType}/nodes/${node.id}`;
const portRoute = (node: Node, adapter: number, port: number) => `${nodeRoute(node)}/adapters/${adapter}/ports/${port}/nio`;
/** An IPv4 peer seen through a dual-stack socket reads ::ffff:a.b.c.d; UDP sockets here are IPv4. */
const plainAddress = (a: string) => a.replace(/^::ffff:/, "");

export class Placement implements Compute {
  /** Per compute: the node ids known to exist there since it last (re)connected. */
  private present = new Map<string, Set<string>>();
  /** Per compute: the project ids created there, to close or delete them with the controller's project. */
  private projects = new Map<string, Set<string>>();
  private connected = new Map<string, boolean>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private subscription?: AsyncIterableIterator<unknown>;
  /** Per compute: its notification WebSocket while connected (status changes arrive at once; polling covers gaps). */
  private sockets = new Map<string, WebSocket>();
  /**
   * Records a state a compute reported for one of its nodes (the domain's setNodeRuntimeState, wired by
   * services.ts): the placement talks to computes and writes no row itself.
   */
  record: (nodeId: string, state: PlacedState) => Promise<Node> = async () => {
    throw new Error("placement: record is not wired");
  };
  /**
   * Has the runtime of each project's runner wire these links again (instances/runners.ts, wired by services.ts): a
   * compute that came back needs its NIOs again, and only the runner relays a project's links.
   */
  relink: (projectId: string, linkIds: string[]) => Promise<void> = async () => {};

  constructor(
    private readonly ctx: AppContext,
    private readonly runtime: LocalCompute,
    private readonly monitor: ComputeMonitor,
  ) {}

  /** Follows the bus as an observer (compute.updated, project.closed/deleted) and polls; before the monitor loads computes. */
  start(): void {
    this.follow();
    this.schedulePoll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const id of [...this.sockets.keys()]) this.closeSocket(id);
    await this.subscription?.return?.();
  }

  // ------------------------------------------------------------------ nodes

  private async ensureProject(t: ComputeTarget, projectId: string): Promise<void> {
    if (this.projects.get(t.computeId)?.has(projectId)) return; // cleared on reconnection and project close
    const project = await this.ctx.db.project.findUnique({ where: { id: projectId } });
    if (!project) throw new NotFoundError(`Project ID ${projectId} doesn't exist`);
    await computeJson(t, "POST", "/v2/compute/projects", { name: project.name, project_id: projectId });
    let set = this.projects.get(t.computeId);
    if (!set) this.projects.set(t.computeId, (set = new Set()));
    set.add(projectId);
  }

  /**
   * Creates the node on its compute. The controller's console port is only a wish: the compute keeps it when it
   * is free and in its range, else picks another (as GNS3's port manager does); the controller records the answer.
   */
  private async createOnCompute(t: ComputeTarget, node: Node): Promise<PlacedState> {
    // The node types a compute API drives are those of our drivers (a remote Patchbay, or gns3-server's).
    const driver = driverFor(node.nodeType);
    if (!driver) throw new ConflictError(`Compute '${t.name}' cannot run ${node.nodeType} nodes (it runs ${runnableTypesInWords()})`);
    await this.ensureProject(t, node.projectId);
    const body: Record<string, unknown> = { node_id: node.id, name: node.name };
    if (hasConsole(driver)) body.console_type = node.consoleType ?? "none";
    Object.assign(body, await driver.remoteCreate(this.ctx, node));
    if (node.console != null) body.console = node.console;
    const answer = await computeJson(t, "POST", `/v2/compute/projects/${node.projectId}/${node.nodeType}/nodes`, body);
    this.markPresent(t.computeId, node.id);
    return { status: answer.status ?? node.status, console: typeof answer.console === "number" ? answer.console : null, consoleHost: t.host };
  }

  private markPresent(computeId: string, nodeId: string): void {
    let set = this.present.get(computeId);
    if (!set) this.present.set(computeId, (set = new Set()));
    set.add(nodeId);
  }

  /** Makes sure the compute has the node (a restarted compute may have lost it). */
  private async ensureNode(t: ComputeTarget, node: Node): Promise<Node> {
    if (this.present.get(t.computeId)?.has(node.id)) return node;
    await this.ensureProject(t, node.projectId);
    try {
      await computeJson(t, "GET", nodeRoute(node));
      this.markPresent(t.computeId, node.id);
      return node;
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      return this.record(node.id, await this.createOnCompute(t, node));
    }
  }

  /** The node's state on its compute. */
  private async runState(t: ComputeTarget, node: Node): Promise<RunState> {
    const answer = await computeJson(t, "GET", nodeRoute(node));
    const state: RunState = { status: answer.status };
    if (runsProcess(node.nodeType)) state.commandLine = answer.command_line ?? "";
    if (typeof answer.console === "number" && answer.console !== node.console) state.console = answer.console;
    return state;
  }

  /** Reads the node's state on its compute back into the controller (node.updated when it changed). */
  private async refresh(t: ComputeTarget, node: Node): Promise<Node> {
    return this.record(node.id, await this.runState(t, node));
  }

  /**
   * Called by createNode for a node whose compute_id is remote; answers what to record of it. On a connected
   * compute the node is created there at once (a refusal throws, and createNode drops the row); on a disconnected
   * one it waits in the database and is created when the compute connects, as the controller's database is the
   * source of truth.
   */
  async place(node: Node): Promise<PlacedState> {
    const t = await computeTarget(this.ctx, node.computeId);
    if (!this.monitor.live(t.computeId).connected) return { consoleHost: t.host };
    return this.createOnCompute(t, node);
  }

  // ------------------------------------------------------------------ the Compute interface (runtime/compute.ts)

  startNode = (node: Node) => this.act(node, "start");
  stopNode = (node: Node) => this.act(node, "stop");
  suspendNode = (node: Node) => this.act(node, "suspend");
  reloadNode = (node: Node) => this.act(node, "reload");

  /** The compute carries the action out; its answer is what the controller records. */
  private async act(node: Node, action: "start" | "stop" | "suspend" | "reload"): Promise<RunState[]> {
    const t = await computeTarget(this.ctx, node.computeId);
    if (!this.monitor.live(t.computeId).connected) throw new ConflictError(`Compute '${t.name}' is not connected`);
    const current = await this.ensureNode(t, node);
    await computeJson(t, "POST", `${nodeRoute(current)}/${action}`, {});
    return [await this.runState(t, current)];
  }

  // ------------------------------------------------------------------ links

  /** The far side of a relay for a link end on a remote compute: a NIO there that sends to our relay port (the runtime's `remoteEnd`). */
  async remoteEnd(projectId: string, node: Node, adapter: number, port: number): Promise<ExternalEnd> {
    const t = await computeTarget(this.ctx, node.computeId);
    const current = await this.ensureNode(t, node);
    const pool = this.runtime.pool;
    const listen = await pool.allocate();
    try {
      const alloc = await computeJson<{ udp_port: number }>(t, "POST", `/v2/compute/projects/${projectId}/ports/udp`, {});
      const here = plainAddress(alloc.localAddress);
      await computeJson(t, "POST", portRoute(current, adapter, port), { type: "nio_udp", lport: alloc.udp_port, rhost: here, rport: listen, filters: {} });
      return {
        listen,
        deliver: alloc.udp_port,
        host: t.host,
        bind: here,
        release: async () => {
          pool.release(listen);
          await computeJson(t, "DELETE", portRoute(current, adapter, port), undefined, TEARDOWN_TIMEOUT_MS).catch(() => {});
        },
      };
    } catch (e) {
      pool.release(listen);
      throw e;
    }
  }

  private async rewireLinks(nodeIds: string[]): Promise<void> {
    const links = await this.ctx.db.link.findMany({ where: { endpoints: { some: { nodeId: { in: nodeIds } } } }, select: { id: true, projectId: true } });
    const byProject = new Map<string, string[]>();
    for (const l of links) byProject.set(l.projectId, [...(byProject.get(l.projectId) ?? []), l.id]);
    for (const [projectId, ids] of byProject) await this.relink(projectId, ids);
  }

  // ------------------------------------------------------------------ connection changes

  private async disconnected(computeId: string): Promise<void> {
    this.closeSocket(computeId);
    this.present.delete(computeId);
    const nodes = await this.ctx.db.node.findMany({ where: { computeId, status: { not: "stopped" } } });
    for (const n of nodes) await this.record(n.id, { status: "stopped" });
  }

  private async reconnected(computeId: string): Promise<void> {
    this.present.delete(computeId);
    this.projects.delete(computeId);
    const t = await computeTarget(this.ctx, computeId);
    const nodes = await this.ctx.db.node.findMany({ where: { computeId, project: { status: "opened" } } });
    for (const n of nodes) {
      try {
        await this.refresh(t, await this.ensureNode(t, n));
      } catch (e) {
        this.ctx.log.info("placement: node not restored", { node: n.id, error: String(e) });
      }
    }
    await this.rewireLinks(nodes.map((n) => n.id));
    this.openSocket(t);
  }

  /**
   * The compute's global notification WebSocket (`/v2/compute/notifications/ws`): a node.updated there for one
   * of our nodes (say, its vpcs died) updates the controller's node at once, as GNS3's controller does.
   */
  private openSocket(t: ComputeTarget): void {
    this.closeSocket(t.computeId);
    if (this.stopped) return;
    const headers: Record<string, string> = {};
    if (t.user) headers.authorization = `Basic ${Buffer.from(`${t.user}:${t.password ?? ""}`).toString("base64")}`;
    const url = computeUrl(t, "/v2/compute/notifications/ws").replace(/^http/, "ws");
    const ws = new WebSocket(url, { headers, rejectUnauthorized: false });
    this.sockets.set(t.computeId, ws);
    ws.on("error", () => ws.terminate()); // the monitor notices a lost compute; polling covers the gap
    ws.on("close", () => {
      if (this.sockets.get(t.computeId) === ws) this.sockets.delete(t.computeId);
    });
    ws.on("message", (data) => void this.computeEvent(t.computeId, data.toString()).catch(() => {}));
  }

  private closeSocket(computeId: string): void {
    const ws = this.sockets.get(computeId);
    this.sockets.delete(computeId);
    ws?.terminate();
  }

  private async computeEvent(computeId: string, text: string): Promise<void> {
    const { action, event } = JSON.parse(text) as { action: string; event: Record<string, any> };
    if (action !== "node.updated" || typeof event?.node_id !== "string") return;
    const node = await this.ctx.db.node.findFirst({ where: { id: event.node_id, computeId } });
    if (!node || !["stopped", "started", "suspended"].includes(event.status)) return;
    const state: PlacedState = { status: event.status };
    if (runsProcess(node.nodeType) && "command_line" in event) state.commandLine = event.command_line ?? "";
    await this.record(node.id, state);
  }

  /**
   * A change made on the controller (rename, emulator properties such as a switch's ports_mapping) is passed on
   * to the compute that runs the node, in the compute API's flat form; a node not created there yet gets its
   * settings when it is.
   */
  async settingsChanged(before: Node, after: Node): Promise<void> {
    if (remoteSettingsKey(before) === remoteSettingsKey(after) || !this.present.get(after.computeId)?.has(after.id)) return;
    const t = await computeTarget(this.ctx, after.computeId);
    await computeJson(t, "PUT", nodeRoute(after), remoteSettings(after));
  }

  /** A deleted node goes from its compute too (a compute that is gone has nothing to delete). */
  async removeNode(node: Node): Promise<void> {
    this.present.get(node.computeId)?.delete(node.id);
    const t = await computeTarget(this.ctx, node.computeId).catch(() => undefined);
    if (!t) return;
    await computeJson(t, "DELETE", nodeRoute(node), undefined, TEARDOWN_TIMEOUT_MS).catch(() => {});
  }

  /**
   * Project close and delete: each compute that holds nodes of the project (or had the project made by this
   * instance) closes or deletes it too. Whatever instance made it there: the computes are read from the nodes.
   */
  async releaseProject(projectId: string, how: "close" | "delete"): Promise<void> {
    const rows = await this.ctx.db.node.findMany({ where: { projectId, computeId: { not: LOCAL_ID } }, distinct: ["computeId"], select: { computeId: true } });
    const computeIds = new Set(rows.map((r) => r.computeId));
    for (const [computeId, ids] of this.projects) if (ids.has(projectId)) computeIds.add(computeId);
    this.forgetProject(projectId);
    for (const computeId of computeIds) {
      const t = await computeTarget(this.ctx, computeId).catch(() => undefined);
      if (!t) continue;
      const route = `/v2/compute/projects/${projectId}${how === "close" ? "/close" : ""}`;
      await computeJson(t, how === "close" ? "POST" : "DELETE", route, undefined, TEARDOWN_TIMEOUT_MS).catch(() => {});
    }
  }

  /** What this instance knew of the project on its computes: made again on the next use (every instance, from the bus). */
  private forgetProject(projectId: string): void {
    for (const [computeId, ids] of this.projects) if (ids.delete(projectId)) this.present.delete(computeId);
  }

  private follow(): void {
    const sub = this.ctx.bus.subscribe(anyOf(controllerTopic, allProjectsTopic));
    this.subscription = sub;
    void (async () => {
      for await (const { data: e } of sub) {
        if (this.stopped) break;
        try {
          if (e.type === "compute.updated" || e.type === "compute.created") await this.connectionChange(e.compute.compute_id, e.compute.connected);
          else if (e.type === "compute.deleted") this.forget(e.compute.compute_id);
          else if (e.type === "project.closed" || e.type === "project.deleted") this.forgetProject(e.project.id);
        } catch (err) {
          this.ctx.log.info("placement: event handling failed", { action: e.type, error: String(err) });
        }
      }
    })();
  }

  private async connectionChange(computeId: string, connected: boolean): Promise<void> {
    if (!computeId || computeId === LOCAL_ID) return;
    const before = this.connected.get(computeId);
    this.connected.set(computeId, connected);
    if (before === connected) return;
    // A first "not connected" counts too: nothing can be running on a compute this server cannot reach.
    if (connected) await this.reconnected(computeId);
    else await this.disconnected(computeId);
  }

  private forget(computeId: string): void {
    this.closeSocket(computeId);
    this.connected.delete(computeId);
    this.present.delete(computeId);
    this.projects.delete(computeId);
  }

  // ------------------------------------------------------------------ status polling

  private schedulePoll(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedulePoll()), STATUS_POLL_MS);
  }

  /** A started remote vpcs or VM can die on its host: read the status of those back (GNS3 gets it as a compute event). */
  private async poll(): Promise<void> {
    const computeIds = [...this.connected].filter(([, up]) => up).map(([id]) => id);
    if (!computeIds.length) return;
    const nodes = await this.ctx.db.node.findMany({
      where: { computeId: { in: computeIds }, nodeType: { in: processTypes() }, status: { not: "stopped" }, project: { status: "opened" } },
    });
    for (const n of nodes) {
      if (this.stopped) return;
      try {
        await this.refresh(await computeTarget(this.ctx, n.computeId), n);
      } catch (e) {
        if (e instanceof NotFoundError) await this.record(n.id, { status: "stopped" });
      }
    }
  }
}

/** What a remote compute reports of a node, to record: its run state and where its console is. */
export type PlacedState = Partial<RunState> & { consoleHost?: string };

/** What a compute is told of a node's settings: its name and emulator properties, in the compute API's flat form. */
const remoteSettings = (node: Node) => {
  const props = nodeProperties(node);
  return { name: node.name, ...(driverFor(node.nodeType)?.remoteSettings(props) ?? props) };
};
const remoteSettingsKey = (node: Node) => JSON.stringify(remoteSettings(node));
