import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, DomainError, ForbiddenError, InvalidInputError, NotFoundError, UnavailableError, UpstreamError } from "../../platform/core/errors.js";
import { redisKeyPrefix } from "../../platform/redis-namespace.js";
import type { CaptureInput } from "../links/capture.js";
import type { NodeAction } from "../nodes/lifecycle.js";

/**
 * A topology change the runtime of the project's runner follows: links wired (made, or their filters/suspend changed)
 * or unwired, a node's device reconfigured or everything of a node released, a whole project wired (open, restore).
 */
export type TopologyChange =
  | { do: "wireLinks"; linkIds: string[] }
  | { do: "unwireLinks"; linkIds: string[] }
  | { do: "releaseNode"; nodeId: string; nodeType: string }
  | { do: "reconfigureNode"; nodeId: string; properties: Record<string, unknown> }
  | { do: "wireProject" };

/** What one instance asks the instance that runs a project to do. */
export type Command =
  | { kind: "nodeAction"; projectId: string; nodeId: string; action: NodeAction }
  | { kind: "topology"; projectId: string; change: TopologyChange }
  | { kind: "releaseProject"; projectId: string }
  | { kind: "startCapture"; projectId: string; linkId: string; input: CaptureInput }
  | { kind: "stopCapture"; projectId: string; linkId: string };

/** Nobody listens on the instance's channel: it is gone (or not up yet). */
export class NotListeningError extends Error {}

/**
 * Commands between the instances of a deployment, on Redis's publish/subscribe: `<prefix>commands:<instance>` carries
 * `{id, from, command}`, `<prefix>replies:<instance>` the answer `{id, error?, result?}` (what the runner's handler returned, as JSON). A
 * domain error thrown by the runner comes back as the same error, so a client gets the same answer whichever
 * instance it asked.
 */
export class CommandChannel {
  private readonly prefix: string;
  private readonly waiting = new Map<string, { resolve: (result: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private handler?: (c: Command) => Promise<unknown>;

  constructor(
    private readonly ctx: AppContext,
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
  ) {
    this.prefix = redisKeyPrefix(ctx.config);
  }

  private channel(kind: "commands" | "replies", instance: string): string {
    return `${this.prefix}${kind}:${instance}`;
  }

  /** Subscribes in the background: with Redis unreachable the server starts, and ioredis subscribes once it is back. */
  listen(handler: (c: Command) => Promise<unknown>): void {
    this.handler = handler;
    const me = this.ctx.config.instanceId;
    this.subscriber.on("message", (channel: string, raw: string) => {
      if (channel === this.channel("commands", me)) void this.answer(raw);
      else if (channel === this.channel("replies", me)) this.settle(raw);
    });
    this.subscriber.subscribe(this.channel("commands", me), this.channel("replies", me)).catch(() => {});
  }

  /** Runs `command` on instance `to`: resolves with its result (as JSON); rejects with its domain error, NotListeningError or UnavailableError. */
  async send(to: string, command: Command, timeoutMs: number): Promise<unknown> {
    const id = randomUUID();
    const done = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new UnavailableError(`Instance ${to} did not carry out ${command.kind} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
    });
    const receivers = await this.publisher.publish(this.channel("commands", to), JSON.stringify({ id, from: this.ctx.config.instanceId, command }));
    if (receivers === 0) {
      clearTimeout(this.waiting.get(id)?.timer);
      this.waiting.delete(id);
      throw new NotListeningError(`Instance ${to} does not listen`);
    }
    return done;
  }

  private async answer(raw: string): Promise<void> {
    const { id, from, command } = JSON.parse(raw) as { id: string; from: string; command: Command };
    let error: { name: string; message: string } | undefined;
    let result: unknown;
    try {
      result = await this.handler!(command);
    } catch (e) {
      error = { name: e instanceof DomainError ? e.name : "Error", message: e instanceof Error ? e.message : String(e) };
      if (!(e instanceof DomainError)) this.ctx.log.error("instances: a command failed", { command: command.kind, error: String(e) });
    }
    await this.publisher.publish(this.channel("replies", from), JSON.stringify({ id, error, result })).catch(() => {});
  }

  private settle(raw: string): void {
    const { id, error, result } = JSON.parse(raw) as { id: string; error?: { name: string; message: string }; result?: unknown };
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    if (error) w.reject(asDomainError(error));
    else w.resolve(result);
  }

  async close(): Promise<void> {
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.reject(new UnavailableError("The server is stopping"));
    }
    this.waiting.clear();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}

const ERRORS: Record<string, new (message: string) => DomainError> = {
  InvalidInputError,
  NotFoundError,
  RecordGoneError: NotFoundError,
  ConflictError,
  UniqueViolationError: ConflictError,
  ForbiddenError,
  UnavailableError,
};

function asDomainError(e: { name: string; message: string }): DomainError {
  return new (ERRORS[e.name] ?? UpstreamError)(e.message);
}

/** With Redis only: one instance alone runs every project itself and never sends a command. */
export async function openCommandChannel(ctx: AppContext): Promise<CommandChannel | undefined> {
  const url = ctx.config.redisUrl;
  if (!url) return undefined;
  const { Redis: RedisClient } = await import("ioredis");
  const publisher = new RedisClient(url, { maxRetriesPerRequest: 2 });
  const subscriber = new RedisClient(url, { maxRetriesPerRequest: null });
  for (const r of [publisher, subscriber]) r.on("error", () => {}); // the bus already reports an unreachable Redis
  return new CommandChannel(ctx, publisher, subscriber);
}
