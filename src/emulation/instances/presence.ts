import os from "node:os";
import type { Redis } from "ioredis";
import type { AppContext } from "../../platform/context.js";
import { redisKeyPrefix } from "../../platform/redis-namespace.js";

/**
 * Which instances of the deployment are alive. Each instance renews a key of its own with a time to live (a
 * heartbeat, `<prefix>instance:<id>`): an instance killed with -9 stops renewing it and is known dead once it
 * expires. One instance alone (no Redis) knows only itself.
 */
export interface Presence {
  /** This instance's id (`PATCHBAY_INSTANCE_ID`). */
  readonly id: string;
  alive(instanceId: string): Promise<boolean>;
  /** Exactly one survivor wins the take-over of a dead instance's projects (for a while: a retry may follow). */
  claimTakeover(deadId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** A dead instance is noticed this long after its last heartbeat at most. */
export const PRESENCE_TTL_MS = 15_000;
const HEARTBEAT_MS = PRESENCE_TTL_MS / 3;

class AloneOnItsDatabase implements Presence {
  constructor(readonly id: string) {}
  async alive(instanceId: string) {
    return instanceId === this.id;
  }
  async claimTakeover() {
    return true;
  }
  async close() {}
}

class RedisPresence implements Presence {
  private readonly prefix: string;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly id: string,
    private readonly redis: Redis,
    ctx: AppContext,
  ) {
    this.prefix = redisKeyPrefix(ctx.config);
  }

  /** The first beat may fail (Redis unreachable: the bus reports it); the server starts all the same and beats on. */
  async register(): Promise<void> {
    const beat = () => this.redis.set(`${this.prefix}instance:${this.id}`, JSON.stringify({ host: os.hostname(), pid: process.pid }), "PX", PRESENCE_TTL_MS);
    await beat().catch(() => {});
    this.timer = setInterval(() => void beat().catch(() => {}), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Unknown while Redis is unreachable: counted alive, so that nobody takes over a runner that may still run. */
  async alive(instanceId: string): Promise<boolean> {
    if (instanceId === this.id) return true;
    return this.redis.exists(`${this.prefix}instance:${instanceId}`).then((n) => n === 1, () => true);
  }

  async claimTakeover(deadId: string): Promise<boolean> {
    return this.redis.set(`${this.prefix}takeover:${deadId}`, this.id, "PX", PRESENCE_TTL_MS, "NX").then((r) => r === "OK", () => false);
  }

  /** A clean stop says so at once: the others need not wait for the key to expire. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.del(`${this.prefix}instance:${this.id}`).catch(() => {});
    this.redis.disconnect();
  }
}

/** ioredis is loaded only when Redis is configured, as for the event bus. */
export async function startPresence(ctx: AppContext): Promise<Presence> {
  const url = ctx.config.redisUrl;
  if (!url) return new AloneOnItsDatabase(ctx.config.instanceId);
  const { Redis: RedisClient } = await import("ioredis");
  const redis = new RedisClient(url, { maxRetriesPerRequest: 2 });
  redis.on("error", () => {}); // the bus already reports an unreachable Redis
  const presence = new RedisPresence(ctx.config.instanceId, redis, ctx);
  await presence.register();
  return presence;
}
