import { createHash } from "node:crypto";
import type { AppContext } from "./context.js";
import type { Subscription, Topic } from "./events.js";

const tags = new WeakMap<Buffer, string>();

/**
 * The ETag of a body, in Express's weak form (`W/"<length in hex>-<SHA-1 base64, 27 characters>"`, what it would
 * send), computed once per body: a kept view is the same Buffer on every hit, so a hit costs a lookup instead of
 * hashing the whole list again (70 KB for 50 nodes, 1.9 MB for 1,000). Given to the answer, Express does not hash it.
 */
export function viewTag(body: Buffer): string {
  let tag = tags.get(body);
  if (tag === undefined) {
    tag = `W/"${body.length.toString(16)}-${createHash("sha1").update(body).digest("base64").slice(0, 27)}"`;
    tags.set(body, tag);
  }
  return tag;
}

/** Bodies kept at most per store (bytes, all scopes together): a 1,000-node list is ~1.4 MB. */
const BUDGET_BYTES = 32 * 1024 * 1024;

/**
 * Answers kept in memory (as the bytes sent) per scope — a project, the quota rules — and dropped whenever the
 * scope changes, so a client polling unchanged data costs no query and no serialisation.
 *
 * Every write publishes an event after it commits. The publishing operation drops its scope at once
 * (`invalidate`), so a read after a write this instance acknowledged sees it; the bus brings every instance's
 * events too (`follow`), so with Redis another instance's write is seen as soon as its event arrives. A read that
 * raced a write does not keep what it read: each scope has a generation, bumped by every invalidation, and a view
 * is stored only if the generation did not move while it was built. `version()` moves with every invalidation, for
 * caches that span scopes (GraphQL results). Least recently used scopes are forgotten beyond the byte budget.
 */
export class ReadViews {
  private views = new Map<string, Map<string, Buffer>>();
  private generations = new Map<string, number>();
  private clock = 0;
  private bytes = 0;
  private subscription: Subscription<unknown> | undefined;

  /** Drops the scopes that `scopesOf` names for each event of `topic`, on every instance. */
  follow<T>(ctx: AppContext, topic: Topic<T>, scopesOf: (event: T, channel: string) => string | undefined): void {
    const sub = ctx.bus.subscribe(topic);
    this.subscription = sub as Subscription<unknown>;
    void (async () => {
      for await (const { channel, data } of sub) {
        const scope = scopesOf(data, channel);
        if (scope !== undefined) this.invalidate(scope);
      }
    })();
  }

  async stop(): Promise<void> {
    await this.subscription?.return();
    this.views.clear();
    this.bytes = 0;
  }

  /** The view `name` of `scope`: the kept bytes, or `build()`'s, kept unless the scope changed meanwhile. */
  async view(scope: string, name: string, build: () => Promise<Buffer>): Promise<Buffer> {
    const kept = this.views.get(scope);
    const hit = kept?.get(name);
    if (hit) {
      this.views.delete(scope); // most recently used last
      this.views.set(scope, kept!);
      return hit;
    }
    const generation = this.generations.get(scope);
    const body = await build();
    if (this.generations.get(scope) === generation && body.length <= BUDGET_BYTES / 4) this.keep(scope, name, body);
    return body;
  }

  /** Moves on every invalidation of any scope: what was read at one version is current while it stays. */
  version(): number {
    return this.clock;
  }

  invalidate(scope: string): void {
    this.generations.set(scope, ++this.clock);
    this.drop(scope);
  }

  private keep(scope: string, name: string, body: Buffer): void {
    let kept = this.views.get(scope);
    if (!kept) this.views.set(scope, (kept = new Map()));
    this.bytes += body.length - (kept.get(name)?.length ?? 0);
    kept.set(name, body);
    for (const oldest of this.views.keys()) {
      if (this.bytes <= BUDGET_BYTES || oldest === scope) break;
      this.drop(oldest);
    }
  }

  private drop(scope: string): void {
    const kept = this.views.get(scope);
    if (!kept) return;
    for (const body of kept.values()) this.bytes -= body.length;
    this.views.delete(scope);
  }
}
