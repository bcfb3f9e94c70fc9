import type { AppContext } from "../../platform/context.js";
import { NotFoundError, UnavailableError } from "../../platform/core/errors.js";
import { LOCAL_ID } from "../computes/model.js";
import { setLinkCaptureState } from "../links/operations.js";
import { setNodeRuntimeState } from "../nodes/operations.js";
import { alwaysOnTypes } from "../runtime/drivers/registry.js";
import type { LocalCompute } from "../runtime/local/manager.js";
import { type Command, type CommandChannel, NotListeningError, type TopologyChange } from "./commands.js";
import type { Presence } from "./presence.js";

type ProjectsWhere = { runnerId: string } | { OR: [{ runnerId: null }, { runnerId: { in: string[] } }] };

/** How often a survivor looks for runners that died. With the presence TTL: a dead runner is noticed within 20 s. */
const SWEEP_MS = 5_000;
/** A node start waits for the emulator (a VM's monitor, a console); the other commands are quick. */
const COMMAND_TIMEOUT_MS = { nodeAction: 120_000, topology: 60_000, releaseProject: 60_000, startCapture: 30_000, stopCapture: 30_000 };

/** What a change that could not be carried out is logged as (the change itself is recorded and announced all the same). */
const NOT_DONE: Record<TopologyChange["do"], string> = {
  wireLinks: "runtime: link not wired",
  unwireLinks: "runtime: link not unwired",
  releaseNode: "runtime: node not released",
  reconfigureNode: "runtime: node not reconfigured",
  wireProject: "runtime: project not wired",
};

/**
 * Who runs each open project: one instance of the deployment, written down in `Project.runnerId`. Every process,
 * in-process device, link relay and capture of a project lives on its runner, so two instances never run the same
 * node, and a link never spans two instances. An action through any instance is carried out by the runner (the
 * command channel); the first instance that needs an open project nobody runs claims it. A runner that dies is
 * noticed by its missing heartbeat (presence.ts): one survivor records its nodes stopped and its captures off
 * (with their events), and runs its open projects from then on (their switches, hubs and links come back up).
 */
export class ProjectRunners {
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly runtime: LocalCompute,
    private readonly presence: Presence,
    private readonly commands: CommandChannel | undefined,
  ) {}

  get me(): string {
    return this.presence.id;
  }

  /**
   * Start-up, before the listener opens (the runtime sweeps what this instance left meanwhile): whatever the
   * database says runs here, under no runner or under a dead one is recorded stopped; then the open projects nobody
   * runs are claimed and wired.
   * Resolves with the projects to wire (the runtime does it in the background).
   */
  async recover(): Promise<string[]> {
    const runners = await this.recordedRunners();
    const gone: string[] = [];
    for (const runnerId of runners) if (runnerId === this.me || !(await this.presence.alive(runnerId))) gone.push(runnerId);
    await this.recordNothingRuns({ OR: [{ runnerId: null }, { runnerId: { in: gone } }] });
    await this.ctx.db.project.updateMany({ where: { runnerId: { in: gone } }, data: { runnerId: null } });
    this.commands?.listen((c) => this.carryOut(c));
    if (this.commands) this.scheduleSweep();
    const claimed = [];
    for (const p of await this.ctx.db.project.findMany({ where: { status: "opened", runnerId: null }, select: { id: true } })) {
      if ((await this.runnerOf(p.id)) === this.me) claimed.push(p.id);
    }
    return claimed;
  }

  /** The instance that runs the open project (claimed here when none does or its runner died); undefined when closed. */
  async runnerOf(projectId: string): Promise<string | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const mine = await this.ctx.db.project.updateMany({
        where: { id: projectId, status: "opened", OR: [{ runnerId: null }, { runnerId: this.me }] },
        data: { runnerId: this.me },
      });
      if (mine.count) return this.me;
      const p = await this.ctx.db.project.findUnique({ where: { id: projectId }, select: { runnerId: true, status: true } });
      if (!p || p.status !== "opened" || !p.runnerId) return undefined;
      if (await this.presence.alive(p.runnerId)) return p.runnerId;
      // Another survivor may hold the take-over for a moment: ask again shortly.
      if (!(await this.takeOver(p.runnerId))) await new Promise((r) => setTimeout(r, 200));
    }
    throw new UnavailableError(`Project ${projectId}: its runner died and the take-over did not finish`);
  }

  /**
   * Carried out where the project runs: `local()` when that is here (or the project is closed), else `command` by the
   * runner, whose domain error is thrown here as it was there. Resolves with local()'s result, or with the runner's
   * answer as `fromReply` reads it (undefined without one: read the rows the runner wrote).
   */
  async onRunner<T>(projectId: string, command: Command, local: () => Promise<T>, fromReply?: (reply: unknown) => T): Promise<T | undefined> {
    const runner = await this.runnerOf(projectId);
    if (this.isHere(runner)) return local();
    return this.sendTo(runner!, command, local, fromReply);
  }

  /** Whether this instance carries out the project's commands itself (a bulk action then asks once, not per node). */
  async runsHere(projectId: string): Promise<boolean> {
    return this.isHere(await this.runnerOf(projectId));
  }

  private isHere(runner: string | undefined): boolean {
    return !runner || runner === this.me || !this.commands;
  }

  /**
   * The operation that changed the topology commands the project's runtime (on its runner) to follow, and awaits it
   * before it announces the change: the bus only tells observers. Never throws: as in GNS3, a link whose end cannot
   * be carried (a cloud port whose interface is missing) still exists; it is logged, and a node start wires it later.
   */
  async apply(projectId: string, change: TopologyChange): Promise<void> {
    const here = () => this.applyHere(projectId, change);
    await this.onRunner(projectId, { kind: "topology", projectId, change }, here).catch((e) =>
      this.ctx.log.error(NOT_DONE[change.do], { project: projectId, ...change, error: String(e) }),
    );
  }

  private async applyHere(projectId: string, change: TopologyChange): Promise<void> {
    const runtime = this.runtime;
    switch (change.do) {
      case "wireLinks":
        // One link that cannot be carried leaves the others wired.
        for (const id of change.linkIds) {
          await runtime.syncLink(id).catch((e) => this.ctx.log.error(NOT_DONE.wireLinks, { project: projectId, link: id, error: String(e) }));
        }
        return;
      case "unwireLinks":
        for (const id of change.linkIds) await runtime.unwireLink(id);
        return;
      case "releaseNode":
        return runtime.releaseNode(change.nodeId, change.nodeType);
      case "reconfigureNode":
        return runtime.reconfigureNode(change.nodeId, change.properties);
      case "wireProject":
        return runtime.reconcileProject(projectId);
    }
  }

  /** Project close and delete: the runner recorded (not claimed: the project is closing) lets go of it. */
  async release(projectId: string, runnerId: string | null): Promise<void> {
    const local = () => this.runtime.releaseProject(projectId);
    if (!runnerId || runnerId === this.me || !this.commands) return local();
    if (!(await this.presence.alive(runnerId))) return void (await this.takeOver(runnerId));
    await this.sendTo(runnerId, { kind: "releaseProject", projectId }, local);
  }

  private async sendTo<T>(runner: string, command: Command, local: () => Promise<T>, fromReply?: (reply: unknown) => T): Promise<T | undefined> {
    try {
      const reply = await this.commands!.send(runner, command, COMMAND_TIMEOUT_MS[command.kind]);
      return fromReply?.(reply);
    } catch (e) {
      if (!(e instanceof NotListeningError)) throw e;
      if (await this.presence.alive(runner)) throw new UnavailableError(`Instance ${runner} runs this project and does not answer`);
      await this.takeOver(runner);
      return command.kind === "releaseProject" ? undefined : this.onRunner(command.projectId, command, local, fromReply);
    }
  }

  /** What another instance asks of this one, as the runner; the answer goes back as JSON (a node action's: the node). */
  private async carryOut(c: Command): Promise<unknown> {
    const { nodeAction } = await import("../nodes/lifecycle.js");
    const { startLinkCapture, stopLinkCapture } = await import("../links/capture.js");
    switch (c.kind) {
      case "nodeAction":
        return nodeAction(this.ctx, c.projectId, c.nodeId, c.action);
      case "topology":
        return this.applyHere(c.projectId, c.change);
      case "releaseProject":
        return this.runtime.releaseProject(c.projectId);
      case "startCapture":
        await startLinkCapture(this.ctx, c.projectId, c.linkId, c.input);
        return;
      case "stopCapture":
        await stopLinkCapture(this.ctx, c.projectId, c.linkId);
    }
  }

  /**
   * A dead instance's projects tell the truth again: its nodes stopped and its captures off, with their events (its
   * processes died with it: they run confined, killed with their parent). Open ones are run here from now on.
   * False when another survivor is doing it.
   */
  async takeOver(deadId: string): Promise<boolean> {
    if (deadId === this.me || !(await this.presence.claimTakeover(deadId))) return false;
    const projects = await this.ctx.db.project.findMany({ where: { runnerId: deadId }, select: { id: true, status: true } });
    await this.recordNothingRuns({ runnerId: deadId });
    await this.ctx.db.project.updateMany({ where: { runnerId: deadId }, data: { runnerId: null } });
    if (projects.length) this.ctx.log.info("instances: took over the projects of a dead instance", { instance: deadId, projects: projects.map((p) => p.id) });
    for (const p of projects) {
      if (p.status === "opened" && (await this.runnerOf(p.id)) === this.me) await this.runtime.reconcileProject(p.id);
    }
    return true;
  }

  /** Nodes whose processes ended by themselves (a VM powered off), recorded stopped with their events. */
  async recordStopped(nodeIds: string[]): Promise<void> {
    for (const id of nodeIds) {
      await setNodeRuntimeState(this.ctx, id, { status: "stopped" }).catch((e) => {
        if (!(e instanceof NotFoundError)) throw e;
      });
    }
  }

  /** In the projects `which` selects: nodes that run processes recorded stopped, captures off, each with its event. */
  private async recordNothingRuns(which: ProjectsWhere): Promise<void> {
    const nodes = await this.ctx.db.node.findMany({
      where: { project: which, computeId: LOCAL_ID, status: { not: "stopped" }, nodeType: { notIn: alwaysOnTypes() } },
      select: { id: true },
    });
    await this.recordStopped(nodes.map((n) => n.id));
    const captures = await this.ctx.db.link.findMany({ where: { project: which, capturing: true, captureComputeId: LOCAL_ID }, select: { id: true } });
    for (const l of captures) await setLinkCaptureState(this.ctx, l.id, { capturing: false, captureComputeId: null }).catch(() => {});
  }

  /** Every instance some project names as its runner. */
  private async recordedRunners(): Promise<string[]> {
    const rows = await this.ctx.db.project.findMany({ where: { runnerId: { not: null } }, distinct: ["runnerId"], select: { runnerId: true } });
    return rows.map((r) => r.runnerId!);
  }

  private scheduleSweep(): void {
    this.timer = setTimeout(async () => {
      try {
        const runners = await this.recordedRunners();
        for (const runnerId of runners) {
          if (!this.stopped && !(await this.presence.alive(runnerId))) await this.takeOver(runnerId);
        }
      } catch (e) {
        this.ctx.log.error("instances: the sweep for dead runners failed", { error: String(e) });
      }
      if (!this.stopped) this.scheduleSweep();
    }, SWEEP_MS);
    this.timer.unref();
  }

  /**
   * Shutdown, after the runtime stopped everything: what ran here is recorded stopped (with events) and its projects
   * are given up, so that another instance claims them at once instead of after the heartbeat expires.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    try {
      await this.recordNothingRuns({ runnerId: this.me });
      await this.ctx.db.project.updateMany({ where: { runnerId: this.me }, data: { runnerId: null } });
    } catch (e) {
      // Nothing can be aborted at shutdown: the next start-up or a survivor's take-over corrects the rows.
      this.ctx.log.error("instances: what ran here was not recorded stopped", { error: String(e) });
    }
    await this.commands?.close();
    await this.presence.close();
  }
}
