import type { AppContext } from "../../platform/context.js";
import { closeProject } from "../projects/operations.js";

/**
 * Counts the notification listeners of each project (HTTP and WebSocket streams) to honour `auto_close`: when
 * the last one leaves, the project is closed after a grace period unless someone attached again meanwhile.
 */
export class ProjectListeners {
  private counts = new Map<string, number>();
  private pending = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly ctx: AppContext) {}

  /** Streams cut by the shutdown itself must not schedule closes against a database being disconnected. */
  stop(): void {
    this.stopped = true;
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
  }

  /** Registers a listener; the returned function unregisters it. */
  attach(projectId: string): () => void {
    this.counts.set(projectId, (this.counts.get(projectId) ?? 0) + 1);
    clearTimeout(this.pending.get(projectId));
    this.pending.delete(projectId);
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      const left = (this.counts.get(projectId) ?? 1) - 1;
      if (left > 0) return void this.counts.set(projectId, left);
      this.counts.delete(projectId);
      if (this.stopped) return;
      this.pending.set(
        projectId,
        setTimeout(() => {
          this.pending.delete(projectId);
          void this.closeIfAutoClose(projectId);
        }, this.ctx.config.autoCloseDelayMs),
      );
    };
  }

  private async closeIfAutoClose(projectId: string): Promise<void> {
    if (this.counts.get(projectId)) return;
    try {
      const project = await this.ctx.db.project.findUnique({ where: { id: projectId } });
      if (project?.autoClose && project.status === "opened") await closeProject(this.ctx, projectId);
    } catch (e) {
      this.ctx.log.error("auto_close", { projectId, error: String(e) });
    }
  }
}
