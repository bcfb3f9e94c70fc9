import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { AppContext } from "../../platform/context.js";
import { redisKeyPrefix } from "../../platform/redis-namespace.js";

/**
 * Where the notification listeners of every instance of a deployment meet, so that auto_close waits for the last
 * listener of all of them, not of one (issue 20). One instance alone needs nothing beyond its own count.
 */
export interface ListenerTally {
  /** This instance has listeners on these projects: on a first attach and on every heartbeat. */
  present(projectIds: string[]): Promise<void>;
  /** This instance's last listener of the project left. */
  left(projectId: string): Promise<void>;
  /**
   * After this instance's last listener left and the delay passed: 0 when no instance has had a listener for
   * `delayMs` and the caller alone is to close the project; otherwise the ms after which to ask again, or
   * undefined when there is nothing left to do (another instance claimed the close).
   */
  claim(projectId: string, delayMs: number): Promise<number | undefined>;
  /** Ms between two present() calls for the projects still listened to here; undefined: no heartbeat needed. */
  readonly heartbeatMs: number | undefined;
  close(): Promise<void>;
}

/** One instance: its own count is the whole count, and its own timer has already waited the delay. */
export const localTally: ListenerTally = {
  present: async () => {},
  left: async () => {},
  claim: async () => 0,
  heartbeatMs: undefined,
  close: async () => {},
};

/** A killed instance's listeners hold their projects open this long at most (it renews every third of it). */
const PRESENCE_TTL_MS = 10_000;

// Redis's clock, not each instance's: instances whose clocks differ still agree on who left when.
const NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)";

/**
 * KEYS[1]: the project's sorted set, one member per instance scored with the time its listeners are known until:
 * now + TTL while present, the time of leaving once gone. ARGV: instance, ms after now, the key's lifetime (longer
 * than any score plus the delay, so that a set nobody writes any more goes by itself).
 */
const MARK = `${NOW} redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) redis.call('PEXPIRE', KEYS[1], ARGV[3])`;

/** The latest score plus the delay still ahead: the ms left to wait; passed, the set is deleted by its one claimer. */
const CLAIM = `local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if #last == 0 then return -1 end
${NOW}
local wait = tonumber(last[2]) + tonumber(ARGV[1]) - now
if wait > 0 then return math.ceil(wait) end
redis.call('DEL', KEYS[1])
return 0`;

/** With Redis: a sorted set per project under the deployment's key prefix (`<prefix>listeners:<project id>`). */
class RedisTally implements ListenerTally {
  readonly heartbeatMs = PRESENCE_TTL_MS / 3;
  private readonly instance = randomUUID();
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: Redis,
    private readonly ctx: AppContext,
  ) {
    this.keyPrefix = `${redisKeyPrefix(ctx.config)}listeners:`;
  }

  private mark(projectId: string, afterNowMs: number): Promise<unknown> {
    const lifetime = 2 * PRESENCE_TTL_MS + this.ctx.config.autoCloseDelayMs;
    return this.redis.eval(MARK, 1, this.keyPrefix + projectId, this.instance, afterNowMs, lifetime);
  }

  async present(projectIds: string[]): Promise<void> {
    await Promise.all(projectIds.map((id) => this.mark(id, PRESENCE_TTL_MS)));
  }

  async left(projectId: string): Promise<void> {
    await this.mark(projectId, 0);
  }

  async claim(projectId: string, delayMs: number): Promise<number | undefined> {
    const wait = Number(await this.redis.eval(CLAIM, 1, this.keyPrefix + projectId, delayMs));
    return wait < 0 ? undefined : wait;
  }

  // disconnect, not quit: with Redis unreachable, quit would wait for a reconnection that may never come.
  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/** ioredis is loaded only when Redis is configured, as for the event bus. */
export async function createListenerTally(ctx: AppContext): Promise<ListenerTally> {
  const url = ctx.config.redisUrl;
  if (!url) return localTally;
  const { Redis: RedisClient } = await import("ioredis");
  const redis = new RedisClient(url, { maxRetriesPerRequest: 2 });
  // The bus already reports an unreachable Redis; a failed call is logged where it is made.
  redis.on("error", () => {});
  return new RedisTally(redis, ctx);
}
