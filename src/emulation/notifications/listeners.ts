import type { AppContext } from "../../platform/context.js";
import { closeProject } from "../projects/operations.js";
import type { ListenerTally } from "./listener-tally.js";

/**
 * Counts the notification listeners of each project (HTTP and WebSocket streams) to honour `auto_close`: when
 * the last one leaves, the project is closed after a grace period unless someone attached again meanwhile. The
 * count here is this instance's; the tally tells whether another instance of the deployment still has one.
 */
export class ProjectListeners {
  private counts = new Map<string, number>();
  private pending = new Map<string, NodeJS.Timeout>();
  private stopped = false;
  private readonly heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly tally: ListenerTally,
  ) {
    const every = tally.heartbeatMs;
    if (every) this.heartbeat = setInterval(() => this.counts.size && this.report(tally.present([...this.counts.keys()])), every).unref();
  }

  /** Streams cut by the shutdown itself must not schedule closes against a database being disconnected. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
    // The listeners the shutdown cuts are leaving: the other instances need not wait for their presence to lapse.
    await Promise.all([...this.counts.keys()].map((id) => this.tally.left(id).catch((e) => this.failed(id, e))));
    await this.tally.close();
  }

  /** Registers a listener; the returned function unregisters it. */
  attach(projectId: string): () => void {
    const count = (this.counts.get(projectId) ?? 0) + 1;
    this.counts.set(projectId, count);
    clearTimeout(this.pending.get(projectId));
    this.pending.delete(projectId);
    if (count === 1) this.report(this.tally.present([projectId]), projectId);
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      const left = (this.counts.get(projectId) ?? 1) - 1;
      if (left > 0) return void this.counts.set(projectId, left);
      this.counts.delete(projectId);
      if (this.stopped) return;
      this.report(this.tally.left(projectId), projectId);
      this.closeAfter(projectId, this.ctx.config.autoCloseDelayMs);
    };
  }

  private closeAfter(projectId: string, ms: number): void {
    this.pending.set(
      projectId,
      setTimeout(() => {
        this.pending.delete(projectId);
        void this.closeIfAutoClose(projectId);
      }, ms),
    );
  }

  private async closeIfAutoClose(projectId: string): Promise<void> {
    if (this.counts.get(projectId)) return;
    try {
      const wait = await this.tally.claim(projectId, this.ctx.config.autoCloseDelayMs);
      if (wait === undefined || this.stopped || this.counts.get(projectId)) return;
      // Another instance had a listener later than ours: the delay runs from its leaving (or its presence lapsing).
      if (wait > 0) return this.closeAfter(projectId, wait);
      const project = await this.ctx.db.project.findUnique({ where: { id: projectId } });
      if (project?.autoClose && project.status === "opened") await closeProject(this.ctx, projectId);
    } catch (e) {
      this.failed(projectId, e);
    }
  }

  private report(write: Promise<void>, projectId?: string): void {
    write.catch((e) => this.failed(projectId, e));
  }

  private failed(projectId: string | undefined, e: unknown): void {
    this.ctx.log.error("auto_close", { projectId, error: String(e) });
  }
}
