import type { AppContext } from "../../platform/context.js";
import { anyOf, type Subscription } from "../../platform/events.js";
import { allProjectsTopic, channelProjectId, controllerTopic, type EmulationEvent } from "../events.js";

/** Bodies kept at most (bytes, all projects together): a 1,000-node list is ~1.4 MB. */
const BUDGET_BYTES = 32 * 1024 * 1024;

/**
 * Read views of a project (the nodes and links lists as sent, byte for byte), kept in memory and dropped whenever
 * the project changes, so a GUI polling an unchanged lab costs no query and no serialisation.
 *
 * Every write publishes an event after it commits. The publishing operation drops the project's views at once
 * (`invalidate`, called by the emulation's publish functions), so a read after a write this instance acknowledged
 * sees it; the bus brings every instance's events here too, so with Redis another instance's write is seen as
 * soon as its event arrives. A read that raced a write does not keep what it read: each project has a generation,
 * bumped by every invalidation, and a view is stored only if the generation did not move while it was built.
 * Least recently used projects are forgotten beyond the byte budget.
 */
export class ProjectReadModel {
  private views = new Map<string, Map<string, Buffer>>();
  private generations = new Map<string, number>();
  private clock = 0;
  private bytes = 0;
  private subscription: Subscription<EmulationEvent> | undefined;

  constructor(private readonly ctx: AppContext) {}

  start(): void {
    const sub = this.ctx.bus.subscribe(anyOf(allProjectsTopic, controllerTopic));
    this.subscription = sub;
    void (async () => {
      for await (const { channel, data } of sub) {
        const projectId = channelProjectId(channel) ?? ("project" in data ? data.project.id : undefined);
        if (projectId) this.invalidate(projectId);
      }
    })();
  }

  async stop(): Promise<void> {
    await this.subscription?.return();
    this.views.clear();
    this.bytes = 0;
  }

  /** The view `name` of the project: the kept bytes, or `build()`'s, kept unless the project changed meanwhile. */
  async view(projectId: string, name: string, build: () => Promise<Buffer>): Promise<Buffer> {
    const kept = this.views.get(projectId);
    const hit = kept?.get(name);
    if (hit) {
      this.views.delete(projectId); // most recently used last
      this.views.set(projectId, kept!);
      return hit;
    }
    const generation = this.generations.get(projectId);
    const body = await build();
    if (this.generations.get(projectId) === generation && body.length <= BUDGET_BYTES / 4) this.keep(projectId, name, body);
    return body;
  }

  /** Moves on every invalidation of any project: what was read at one version is current while it stays. */
  version(): number {
    return this.clock;
  }

  invalidate(projectId: string): void {
    this.generations.set(projectId, ++this.clock);
    this.drop(projectId);
  }

  private keep(projectId: string, name: string, body: Buffer): void {
    let kept = this.views.get(projectId);
    if (!kept) this.views.set(projectId, (kept = new Map()));
    this.bytes += body.length - (kept.get(name)?.length ?? 0);
    kept.set(name, body);
    for (const oldest of this.views.keys()) {
      if (this.bytes <= BUDGET_BYTES || oldest === projectId) break;
      this.drop(oldest);
    }
  }

  private drop(projectId: string): void {
    const kept = this.views.get(projectId);
    if (!kept) return;
    for (const body of kept.values()) this.bytes -= body.length;
    this.views.delete(projectId);
  }
}
