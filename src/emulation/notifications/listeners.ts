import type { AppContext } from "../../platform/context.js";
import { closeProject } from "../projects/operations.js";

/** GNS3 closes an auto_close project this long after its last notification listener left. */
const AUTO_CLOSE_DELAY_MS = 5000;

/**
 * Counts the notification listeners of each project (HTTP and WebSocket streams) to honour `auto_close`: when
 * the last one leaves, the project is closed after a grace period unless someone attached again meanwhile.
 */
class ProjectListeners {
  private counts = new Map<string, number>();
  private pending = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly ctx: AppContext) {
    // Streams cut by the shutdown itself must not schedule closes against a database being disconnected.
    ctx.onShutdown(() => {
      this.stopped = true;
      for (const t of this.pending.values()) clearTimeout(t);
      this.pending.clear();
    });
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
        }, AUTO_CLOSE_DELAY_MS),
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

const registries = new WeakMap<AppContext, ProjectListeners>();

/** The one registry of a server, shared by the HTTP and WebSocket streams. */
export function projectListeners(ctx: AppContext): ProjectListeners {
  let r = registries.get(ctx);
  if (!r) registries.set(ctx, (r = new ProjectListeners(ctx)));
  return r;
}
