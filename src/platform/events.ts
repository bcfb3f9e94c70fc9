import type { Redis } from "ioredis";
import { PullQueue } from "./pull-queue.js";

/**
 * The event bus every operation publishes to. Events carry a monotonically increasing id so that a subscriber
 * can resume after a reconnect: the bus keeps a bounded replay window (REPLAY_WINDOW events). In memory by
 * default; with Redis the window is a capped stream, so ids are shared and events cross instances.
 *
 * The bus is typed by its channels: each feature declares the channels it owns and the domain event each one
 * carries by merging into EventChannels, and subscribers follow a Topic that names the channels and so the
 * events they receive. Events travel as JSON (the Redis stream, the replay window): payloads are plain data.
 */
export interface BusEvent<T = unknown> {
  id: string;
  channel: string;
  data: T;
}

/** channel name (or template-literal pattern) → the event it carries. Features add theirs by declaration merging. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EventChannels {}
export type Channel = keyof EventChannels & string;

/** Channels a subscriber follows, typed by the events they carry. */
export interface Topic<T> {
  match(channel: string): boolean;
  /** Type only: the event the channels carry. */
  readonly event?: T;
}

/** Exactly one channel. */
export const channelTopic = <C extends Channel>(name: C): Topic<EventChannels[C]> => ({ match: (c) => c === name });

/** Follows several topics at once (their events are the union). */
export const anyOf = <Ts extends Topic<unknown>[]>(...topics: Ts): Topic<Ts[number] extends Topic<infer T> ? T : never> => ({
  match: (channel) => topics.some((t) => t.match(channel)),
});

export interface SubscribeOptions {
  /** Replay retained events published after this id before going live. */
  after?: string;
}

/**
 * A replay that cannot be complete: the cursor is older than the window (events after it were dropped: EXPIRED),
 * or not one this bus gave (newer than its last event, e.g. from before an in-memory bus restarted: UNKNOWN). The
 * subscription then replays nothing and follows live events after `cursor`, the bus's last event id when it
 * subscribed: a subscriber reads its state afresh and applies what comes after.
 */
export interface ReplayGap {
  reason: "EXPIRED" | "UNKNOWN";
  cursor: string;
}

export interface EventBus {
  publish<C extends Channel>(channel: C, data: EventChannels[C]): Promise<BusEvent<EventChannels[C]>>;
  /** The id of the last event published (on any channel), "0-0" before the first: a cursor to resume from. */
  lastId(): Promise<string>;
  subscribe<T>(topic: Topic<T>, opts?: SubscribeOptions): Subscription<T>;
  /** Open subscriptions on this instance (the debug bundle reports it: a number that only grows is a leak). */
  subscriberCount(): number;
  close(): Promise<void>;
}

export const REPLAY_WINDOW = 10_000;
/** Events kept for a subscriber that reads slower than they come (then the oldest go). */
export const SUBSCRIBER_BACKLOG = 10_000;

/** Ids look like Redis stream ids ("<ms>-<seq>"); the in-memory bus uses "0-<n>". */
export function compareEventIds(a: string, b: string): number {
  const [a1, a2] = a.split("-").map(BigInt);
  const [b1, b2] = b.split("-").map(BigInt);
  if (a1 !== b1) return a1 < b1 ? -1 : 1;
  if (a2 === b2) return 0;
  return (a2 ?? 0n) < (b2 ?? 0n) ? -1 : 1;
}

export function isEventId(s: string): boolean {
  return /^\d{1,20}-\d{1,20}$/.test(s);
}

/** One subscriber's events: a pull queue that unsubscribes itself on return(). */
export class Subscription<T = unknown> extends PullQueue<BusEvent<T>> {
  private lastId: string | undefined;
  /** Settles once the replay asked with `after` is queued: with the gap when it could not be complete. */
  replayed: Promise<ReplayGap | undefined> = Promise.resolve(undefined);

  constructor(
    readonly match: (channel: string) => boolean,
    onClose: (s: Subscription<T>) => void,
  ) {
    super(SUBSCRIBER_BACKLOG, () => onClose(this));
  }

  /** Delivers in id order and never twice, which makes replay + live overlap harmless. */
  override push(event: BusEvent<T>): void {
    if (this.ended) return;
    if (this.lastId && compareEventIds(event.id, this.lastId) <= 0) return;
    this.lastId = event.id;
    super.push(event);
  }
}

abstract class FanoutBus implements EventBus {
  protected subscribers = new Set<Subscription<unknown>>();

  subscriberCount(): number {
    return this.subscribers.size;
  }

  abstract publish<C extends Channel>(channel: C, data: EventChannels[C]): Promise<BusEvent<EventChannels[C]>>;
  abstract lastId(): Promise<string>;
  /** The retained events after `after`, or the gap that makes such a replay incomplete. */
  protected abstract replay(after: string): Promise<{ events: BusEvent[]; gap?: ReplayGap }>;
  abstract close(): Promise<void>;

  protected deliver(event: BusEvent): void {
    for (const s of this.subscribers) if (s.match(event.channel)) s.push(event);
  }

  subscribe<T>({ match }: Topic<T>, opts: SubscribeOptions = {}): Subscription<T> {
    const sub = new Subscription<T>(match, (s) => this.subscribers.delete(s as Subscription<unknown>));
    const subscriber = sub as Subscription<unknown>;
    if (opts.after === undefined) {
      this.subscribers.add(subscriber);
      return sub;
    }
    // Replay first, then go live; live events that arrive meanwhile are held back and de-duplicated by id.
    const held: BusEvent[] = [];
    const holder = new Subscription(match, () => {});
    holder.push = (e) => void held.push(e);
    this.subscribers.add(holder);
    sub.replayed = this.replay(opts.after).then(
      ({ events, gap }) => {
        for (const e of events) if (match(e.channel)) subscriber.push(e);
        this.subscribers.delete(holder);
        // After a gap only what follows its cursor: what was held back may be older.
        for (const e of held) if (!gap || compareEventIds(e.id, gap.cursor) > 0) subscriber.push(e);
        this.subscribers.add(subscriber);
        return gap;
      },
      () => {
        this.subscribers.delete(holder);
        this.subscribers.add(subscriber);
        return undefined;
      },
    );
    return sub;
  }
}

export class MemoryBus extends FanoutBus {
  private seq = 0;
  /**
   * Kept serialized: one flat string per event instead of its object graph (a node event's payload is a whole
   * node). A full window costs a few times less memory and nothing for the garbage collector to trace.
   */
  private window: { id: string; channel: string; json: string }[] = [];
  /** The newest event that left the window: a cursor older than it has lost events. */
  private dropped: string | undefined;

  async lastId(): Promise<string> {
    return `0-${this.seq}`;
  }

  async publish<C extends Channel>(channel: C, data: EventChannels[C]): Promise<BusEvent<EventChannels[C]>> {
    const json = JSON.stringify(data ?? null);
    const event: BusEvent<EventChannels[C]> = { id: `0-${++this.seq}`, channel, data: JSON.parse(json) };
    this.window.push({ id: event.id, channel, json });
    if (this.window.length > REPLAY_WINDOW) this.dropped = this.window.shift()!.id;
    this.deliver(event);
    return event;
  }

  protected async replay(after: string): Promise<{ events: BusEvent[]; gap?: ReplayGap }> {
    const last = `0-${this.seq}`;
    if (compareEventIds(after, last) > 0) return { events: [], gap: { reason: "UNKNOWN", cursor: last } };
    if (this.dropped && compareEventIds(after, this.dropped) < 0) return { events: [], gap: { reason: "EXPIRED", cursor: last } };
    return { events: this.window.filter((e) => compareEventIds(e.id, after) > 0).map(({ id, channel, json }) => ({ id, channel, data: JSON.parse(json) })) };
  }

  async close(): Promise<void> {
    for (const s of [...this.subscribers]) await s.return();
  }
}

/**
 * Events live in one capped Redis stream per deployment (`<key prefix>events`, see redis-namespace.ts); each instance
 * tails it with a blocking XREAD on its own connection.
 */
export class RedisBus extends FanoutBus {
  private readonly writer: Redis;
  private readonly reader: Redis;
  private closed = false;
  private readonly tailing: Promise<void>;
  private readonly key: string;

  /**
   * `RedisClient`: ioredis's class, imported by createBus only when Redis is configured. `unreachable` hears of a
   * lost connection once until it is back: ioredis would print a raw line of its own for every retry.
   */
  constructor(url: string, RedisClient: typeof Redis, keyPrefix: string, unreachable: (error: Error) => void = () => {}) {
    super();
    this.key = `${keyPrefix}events`;
    this.writer = new RedisClient(url, { maxRetriesPerRequest: 2 });
    this.reader = new RedisClient(url, { maxRetriesPerRequest: null });
    let reported = false;
    for (const client of [this.writer, this.reader]) {
      client.on("error", (e: Error) => {
        if (reported) return;
        reported = true;
        unreachable(e);
      });
      client.on("ready", () => (reported = false));
    }
    this.tailing = this.tail();
  }

  private static decode([id, fields]: [string, string[]]): BusEvent {
    return { id, channel: fields[1], data: JSON.parse(fields[3]) };
  }

  private async tail(): Promise<void> {
    let last = "$";
    while (!this.closed) {
      try {
        const res = (await this.reader.xread("BLOCK", 1000, "STREAMS", this.key, last)) as
          | [string, [string, string[]][]][]
          | null;
        for (const entry of res?.[0]?.[1] ?? []) {
          last = entry[0];
          this.deliver(RedisBus.decode(entry));
        }
      } catch (e) {
        if (this.closed) return;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async publish<C extends Channel>(channel: C, data: EventChannels[C]): Promise<BusEvent<EventChannels[C]>> {
    const json = JSON.stringify(data ?? null);
    const id = (await this.writer.xadd(this.key, "MAXLEN", "~", REPLAY_WINDOW, "*", "c", channel, "d", json)) as string;
    return { id, channel, data: JSON.parse(json) };
  }

  /**
   * From XINFO STREAM: the stream's last id; the newest id deleted from it (XDEL); and, once trimming has dropped
   * entries (entries-added > length), its first retained id. "0-0" where there is none (an empty stream).
   */
  private static streamIds(info: unknown): { last: string; deleted: string; firstKept: string | undefined } {
    const fields = Array.isArray(info) ? (info as unknown[]) : [];
    const field = (name: string) => {
      const i = fields.indexOf(name);
      return i >= 0 ? fields[i + 1] : undefined;
    };
    const id = (v: unknown) => (typeof v === "string" ? v : "0-0");
    const first = field("first-entry");
    const trimmed = Number(field("entries-added") ?? 0) > Number(field("length") ?? 0);
    return {
      last: id(field("last-generated-id")),
      deleted: id(field("max-deleted-entry-id")),
      firstKept: trimmed && Array.isArray(first) ? id(first[0]) : undefined,
    };
  }

  async lastId(): Promise<string> {
    const info = await this.writer.call("XINFO", "STREAM", this.key).catch(() => undefined); // no stream yet: no event
    return RedisBus.streamIds(info).last;
  }

  protected async replay(after: string): Promise<{ events: BusEvent[]; gap?: ReplayGap }> {
    // One transaction: the window cannot move between the check and the read.
    const results = await this.writer.multi().call("XINFO", "STREAM", this.key).xrange(this.key, `(${after}`, "+").exec();
    const [infoError, info] = results?.[0] ?? [];
    const { last, deleted, firstKept } = RedisBus.streamIds(infoError ? undefined : info);
    if (compareEventIds(after, last) > 0) return { events: [], gap: { reason: "UNKNOWN", cursor: last } };
    // Trimmed entries are all older than the first kept one: a cursor before it may have lost some (when it is the
    // very last trimmed entry it has not, and the resync is merely unneeded — Redis does not record that id).
    const expired = compareEventIds(after, deleted) < 0 || (firstKept !== undefined && compareEventIds(after, firstKept) < 0);
    if (expired) return { events: [], gap: { reason: "EXPIRED", cursor: last } };
    const entries = (results?.[1]?.[1] ?? []) as [string, string[]][];
    return { events: entries.map(RedisBus.decode) };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of [...this.subscribers]) await s.return();
    // Between two reconnect attempts (Redis unreachable) ioredis's disconnect() leaves the pending XREAD pending
    // forever: waiting for the tail loop then would keep a server whose Redis is down from shutting down.
    const tailing = this.reader.status === "reconnecting" ? undefined : this.tailing;
    this.reader.disconnect();
    await tailing;
    await this.writer.quit();
  }
}

/** ioredis is loaded only when Redis is configured (a few percent of the start-up otherwise). */
export async function createBus(redis: { url: string; keyPrefix: string } | undefined, unreachable?: (error: Error) => void): Promise<EventBus> {
  return redis ? new RedisBus(redis.url, (await import("ioredis")).Redis, redis.keyPrefix, unreachable) : new MemoryBus();
}
