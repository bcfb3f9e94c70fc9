import type { ServerResponse } from "node:http";
import { getOperationAST, Kind, type ExecutionArgs, type ExecutionResult, type FieldNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { AppContext } from "../context.js";
import { SUBSCRIBER_BACKLOG } from "../events.js";
import { StreamedBody } from "../http/stream-frames.js";
import { PullQueue } from "../pull-queue.js";
import { scopedBus } from "./subscription-scope.js";

type Source = AsyncIterator<ExecutionResult> & AsyncIterable<ExecutionResult>;

/**
 * Yoga plugin: subscribers of the same live stream share one execution. Every client of a project's events asks
 * the same document with the same variables; executed per client, each event was executed and resolved once per
 * subscriber (1,000 times per event with 1,000 clients), the bulk of the server's work. Here the first subscriber
 * of a (document, operation, variables) starts one execution with a context of its own; every subscriber reads
 * the same results from its own queue, and the execution ends with its last subscriber.
 *
 * Shared only: a subscription whose one root field is in `fields` (streams whose results do not depend on who
 * asks, read from the event bus) and that asks no replay (`after` absent or null): a replay is for that client
 * alone, and a client joining a running execution receives what comes from then on, as a new execution would.
 *
 * A subscriber whose transport put a DirectStream in its context (graphql-ws and SSE, see yoga.ts) is also written
 * to directly: each result is serialized once and its frame written to the subscriber's socket, instead of every
 * subscriber's result passing on its own through the plugins' result hooks, the transport's serializer and (for
 * SSE) a web stream, which cost more than the write. Only results that those hooks would leave unchanged are
 * written directly: a result with errors (masked on the normal path) or extensions, or a subscriber whose
 * transport cannot take a write now (its client not reading), goes the normal way from then on, so that the
 * subscriber's results stay in order.
 */
export function useSharedSubscriptions(ctx: AppContext, fields: ReadonlySet<string>): Plugin {
  const running = new Map<string, SharedExecution>();
  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const key = shareKey(args, fields);
      if (!key) return;
      setSubscribeFn(async (subscriber) => {
        let shared = running.get(key);
        if (!shared) {
          // Its own scope: the execution must not end with the subscriber that happened to start it.
          const ended = new AbortController();
          const contextValue = { ...(subscriber.contextValue as object), bus: scopedBus(ctx.bus, ended.signal), operationEnded: ended.signal };
          shared = new SharedExecution(subscribeFn({ ...subscriber, contextValue }), () => {
            ended.abort();
            if (running.get(key) === shared) running.delete(key);
          });
          running.set(key, shared);
        }
        return shared.join((subscriber.contextValue as { directStream?: DirectStream }).directStream);
      });
    },
  };
}

/** The sharing key of a subscription, or undefined when it is not shared. */
function shareKey(args: ExecutionArgs, fields: ReadonlySet<string>): string | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== "subscription") return undefined;
  const roots = operation.selectionSet.selections.filter((s): s is FieldNode => s.kind === Kind.FIELD && !s.name.value.startsWith("__"));
  if (roots.length !== 1 || roots.length !== operation.selectionSet.selections.length || !fields.has(roots[0].name.value)) return undefined;
  const after = roots[0].arguments?.find((a) => a.name.value === "after")?.value;
  const replay = after && (after.kind === Kind.VARIABLE ? args.variableValues?.[after.name.value] != null : after.kind !== Kind.NULL);
  if (replay) return undefined;
  const text = args.document.loc?.source.body;
  if (text === undefined) return undefined;
  return JSON.stringify([text, args.operationName ?? null, args.variableValues ?? {}]);
}

/** A subscriber's transport, writing a result it is given directly (see useSharedSubscriptions). */
export interface DirectStream {
  /** Writes the result; false when it cannot (then the result and those after it take the normal path). */
  write(result: SerializedResult): boolean;
}

/** A result of a shared execution, serialized once for all the subscribers it is written to directly. */
export class SerializedResult {
  /** What the transports' serializers would make of it (no errors or extensions to adjust). */
  readonly json: string;
  private sse: StreamedBody | undefined;

  constructor(result: ExecutionResult) {
    this.json = JSON.stringify(result);
  }

  /** The SSE event Yoga sends for it, as the SSE response `res` carries it. */
  sseFor(res: ServerResponse): Buffer {
    return (this.sse ??= new StreamedBody(Buffer.from(`event: next\ndata: ${this.json}\n\n`))).for(res);
  }
}

/** One execution and the queues of the subscribers reading it. */
class SharedExecution {
  /** Each subscriber's queue, and its direct stream while it takes results directly. */
  private readonly readers = new Map<PullQueue<ExecutionResult>, DirectStream | undefined>();
  private source: Source | undefined;
  private ended = false;
  /** An execution that could not start (an error result, no stream): each joiner gets it as is. */
  private readonly started: Promise<ExecutionResult | undefined>;

  /** `result`: what the subscribe function returned (a stream, or a result saying why there is none). */
  constructor(
    result: unknown,
    private readonly onEnd: () => void,
  ) {
    this.started = Promise.resolve(result).then(
      (r) => {
        if (!isAsyncIterable(r)) {
          this.finish();
          return r as ExecutionResult;
        }
        this.source = r as Source;
        void this.pump();
        return undefined;
      },
      (error) => {
        this.finish();
        throw error;
      },
    );
  }

  async join(direct: DirectStream | undefined): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
    // Each subscriber reads the shared results from its own queue, as a bus subscriber reads events.
    const reader: PullQueue<ExecutionResult> = new PullQueue(SUBSCRIBER_BACKLOG, () => this.leave(reader));
    this.readers.set(reader, direct);
    const failed = await this.started;
    if (failed) {
      this.readers.delete(reader);
      return failed;
    }
    if (this.ended) reader.end();
    return reader;
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const next = await this.source!.next();
        if (next.done) break;
        const result = next.value;
        const serialized = result.errors || result.extensions ? undefined : new SerializedResult(result);
        for (const [r, direct] of this.readers) {
          if (direct && serialized && direct.write(serialized)) continue;
          if (direct) this.readers.set(r, undefined);
          r.push(result);
        }
      }
      for (const r of this.readers.keys()) r.end();
    } catch (error) {
      for (const r of this.readers.keys()) r.fail(error);
    } finally {
      this.finish();
    }
  }

  private leave(reader: PullQueue<ExecutionResult>): void {
    this.readers.delete(reader);
    if (this.readers.size === 0) {
      this.finish();
      void this.source?.return?.();
    }
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }
}

const isAsyncIterable = (x: unknown): x is AsyncIterable<unknown> => x != null && typeof x === "object" && Symbol.asyncIterator in x;
