import { getOperationAST, Kind } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { AppContext } from "../context.js";
import { trackStream } from "../ops/metrics.js";

/** Counts open GraphQL subscriptions (graphql-ws and SSE) as streams of kind `graphql:<root field>`. */
export function useSubscriptionMetrics(ctx: Pick<AppContext, "services">): Plugin {
  return {
    onSubscribe() {
      return {
        onSubscribeResult({ args, result }) {
          if (!result || typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") return;
          const first = getOperationAST(args.document, args.operationName)?.selectionSet.selections[0];
          const end = trackStream(ctx, `graphql:${first?.kind === Kind.FIELD ? first.name.value : "subscription"}`);
          return { onEnd: end };
        },
      };
    },
  };
}
