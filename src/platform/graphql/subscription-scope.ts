import type { Plugin } from "graphql-yoga";
import type { AppContext } from "../context.js";
import type { EventBus } from "../events.js";

/**
 * Ends every event-bus subscription a GraphQL subscription opened as soon as the operation ends (client
 * unsubscribes, socket closes, SSE request aborted). Without it a subscriber on a quiet channel outlived its
 * client until the next event there: resolvers loop over the bus in async generators (ours, and Pothos' errors
 * plugin wraps every typed-error subscription in one), and a generator's return() waits for the pending next().
 * Ending the bus subscription resolves that pending next(), so the generators unwind. Streams that do not come
 * from the bus (a link's packets) wait on `ctx.operationEnded` for the same reason.
 */
export function useSubscriptionScope(): Plugin {
  return {
    onSubscribe({ context, extendContext }) {
      const ended = new AbortController();
      extendContext({ bus: scopedBus((context as unknown as AppContext).bus, ended.signal), operationEnded: ended.signal } as never);
      const end = () => ended.abort();
      return {
        onSubscribeResult: ({ result }) => {
          if (!(Symbol.asyncIterator in result)) return end(); // an error result: no stream will follow
          return { onEnd: end };
        },
        onSubscribeError: end,
      };
    },
  };
}

/** The bus as one operation sees it: its subscriptions end with `signal`. */
export function scopedBus(bus: EventBus, signal: AbortSignal): EventBus {
  return {
    publish: (channel, data) => bus.publish(channel, data),
    lastId: () => bus.lastId(),
    subscribe(match, opts) {
      const sub = bus.subscribe(match, opts);
      if (signal.aborted) void sub.return();
      else signal.addEventListener("abort", () => void sub.return(), { once: true });
      return sub;
    },
    subscriberCount: () => bus.subscriberCount(),
    close: () => bus.close(),
  };
}
