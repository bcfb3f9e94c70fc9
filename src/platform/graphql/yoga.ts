import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Request, Response } from "express";
import { GraphQLError, type ExecutionArgs, type GraphQLSchema } from "graphql";
import { createFetch } from "@whatwg-node/fetch";
import { makeServer } from "graphql-ws";
import { createYoga, type Plugin } from "graphql-yoga";
import type { WebSocket } from "ws";
import { parseBytes } from "../bytes.js";
import type { AppContext } from "../context.js";
import { DomainError } from "../core/errors.js";
import { beforeStreamWrite, coalesceResponseWrites, writeStreamBytes } from "../http/coalesced-writes.js";
import { webSocketTextFrame } from "../http/stream-frames.js";
import type { WebSocketRoute } from "../http/websockets.js";
import { currentRequestId } from "../core/log.js";
import { useCsrfPrevention } from "./csrf.js";
import { useResourceLimits } from "./limits.js";
import type { DirectStream } from "./shared-subscriptions.js";
import { useOperationChoice } from "./operation-choice.js";
import { useSubscriptionMetrics } from "./subscription-metrics.js";
import { useSubscriptionScope } from "./subscription-scope.js";

/**
 * A client mistake: a GraphQL error about the request itself (syntax, validation, variables, HTTP method,
 * body), raised before any resolver ran and so carrying no path, or deliberately raised with a message for
 * clients (a GraphQLError or a domain error thrown by a resolver). Anything else (a database error, a bug) is
 * internal.
 */
function isClientError(error: unknown): boolean {
  if (!isGraphQLError(error)) return error instanceof DomainError;
  const original = error.originalError;
  if (!original) return true;
  if (original instanceof DomainError || isGraphQLError(original)) return true;
  // Coercion of variables wraps what a scalar's parseValue threw; there is no resolver (no path) involved.
  return !error.path && original instanceof TypeError && error.message.startsWith("Variable ");
}

/**
 * Pothos checks connection arguments (`first: -1`, an undecodable `after`) as the resolver starts and throws its
 * PothosValidationError (by name: the bundle may hold another copy of the class): the client's mistake, worded
 * for a client, on every connection at once.
 */
function connectionArgumentError(error: unknown): GraphQLError | undefined {
  const original = isGraphQLError(error) ? error.originalError : undefined;
  if (!isGraphQLError(error) || original?.name !== "PothosValidationError") return undefined;
  const message = original.message.startsWith("Invalid cursor")
    ? "Invalid cursor: use a cursor this connection returned (edges.cursor, pageInfo.startCursor or endCursor)"
    : original.message;
  return new GraphQLError(message, { nodes: error.nodes, path: error.path, extensions: { code: "BAD_USER_INPUT" } });
}

/** By name: the executor may create its errors with another copy of graphql-js than ours. */
const isGraphQLError = (e: unknown): e is GraphQLError => e instanceof Error && e.name === "GraphQLError";

/** Unsent bytes of a graphql-ws client above which each message waits until it is written (see send below). */
const SEND_BUFFER_HIGH = 1024 * 1024;

/** A shared subscription's `next` messages to a graphql-ws subscriber, framed and written on its socket. */
function graphqlWsDirectStream(ws: WebSocket, socket: Socket, id: string): DirectStream {
  const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`; // graphql-ws's own key order
  return {
    write(result) {
      if (ws.readyState !== ws.OPEN) return true; // the client left: no one to deliver it to
      if (ws.bufferedAmount >= SEND_BUFFER_HIGH) return false;
      writeStreamBytes(socket, webSocketTextFrame(Buffer.from(`${prefix}${result.json}}`)));
      return true;
    },
  };
}

/** A shared subscription's events to an SSE subscriber, written on its socket once Yoga has sent the head. */
function sseDirectStream(res: Response): DirectStream {
  return {
    write(result) {
      const socket = res.socket;
      if (!socket || res.destroyed || res.writableEnded) return true;
      if (!res.headersSent || socket.writableLength >= SEND_BUFFER_HIGH) return false;
      writeStreamBytes(socket, result.sseFor(res));
      return true;
    },
  };
}

/** `examples`: the tabs GraphiQL opens with (a browser without tabs of its own saved), instead of its welcome text. */
export function createGraphQL(schema: GraphQLSchema, ctx: AppContext, featurePlugins: Plugin[] = [], examples: { query: string }[] = []) {
  const yoga = createYoga<{ req: Request; res: Response; directStream?: DirectStream }, AppContext>({
    schema,
    graphqlEndpoint: "/graphql",
    // GraphiQL is served on GET /graphql with its assets inlined (works offline); subscriptions over graphql-ws.
    // The assets (~9 MB of JavaScript, ~29 MB of heap) are loaded when the page is first asked for, not at start.
    graphiql: { subscriptionsProtocol: "WS", title: "Patchbay GraphiQL", ...(examples.length ? { defaultTabs: examples, defaultQuery: examples[0].query } : {}) },
    renderGraphiQL: async (options) => (await import("@graphql-yoga/render-graphiql")).renderGraphiQL(options),
    context: () => ctx,
    // Uploads (the GraphQL multipart request convention): one file per request, refused while it arrives beyond
    // the upload limit (413), the `operations` and `map` parts held to the JSON body limit.
    // Yoga's own body limit (25 MB by default, whatever the upload limit) is off: every body but an upload's is
    // held to PATCHBAY_BODY_LIMIT before Yoga reads it (body-limit.ts), an upload's by the part limits below.
    maxRequestBodySize: false,
    fetchAPI: createFetch({
      formDataLimits: { files: 1, fields: 2, parts: 3, fileSize: parseBytes(ctx.config.uploadLimit), fieldSize: parseBytes(ctx.config.bodyLimit) },
    }),
    logging: false,
    // Cross-origin answers are the server's one origin policy (src/platform/http/origin-policy.ts), not Yoga's.
    cors: false,
    plugins: [useCsrfPrevention(), useResourceLimits(ctx.config.graphqlCost), useOperationChoice(), useSubscriptionScope(), useSubscriptionMetrics(ctx), ...featurePlugins],
    // Client mistakes keep their message; internal errors reach clients as "Unexpected error." with the request id
    // (extensions.requestId, also the X-Request-Id header), and the log under that id.
    maskedErrors: {
      maskError(error, message) {
        if (isClientError(error)) return error as Error;
        const badArgument = connectionArgumentError(error);
        if (badArgument) return badArgument;
        const original = (error as { originalError?: unknown }).originalError ?? error;
        ctx.log.error("graphql", { error: original }); // within the request's scope: the line carries its id
        const requestId = currentRequestId();
        return new GraphQLError(message, { extensions: { code: "INTERNAL_SERVER_ERROR", ...(requestId ? { requestId } : {}) } });
      },
    },
  });

  type Enveloped = ReturnType<typeof yoga.getEnveloped>;
  type EnvelopedArgs = ExecutionArgs & { rootValue: Pick<Enveloped, "execute" | "subscribe"> };

  // graphql-ws on the shared listener, using Yoga's envelop so both transports run the same plugins.
  const wsServer = makeServer<Record<string, unknown>, { request: IncomingMessage; socket: WebSocket }>({
    execute: (args) => (args as EnvelopedArgs).rootValue.execute(args),
    subscribe: (args) => (args as EnvelopedArgs).rootValue.subscribe(args),
    onSubscribe: async (c, id, params) => {
      // Each running operation holds its iterator and bus subscription: a bounded number per connection. The id
      // is already among c.subscriptions; refused with an error message for it (the protocol's per-operation
      // answer), so the connection and its other operations go on.
      if (Object.keys(c.subscriptions).length > ctx.config.wsSubscriptionLimit) {
        const message = `A connection may run at most ${ctx.config.wsSubscriptionLimit} operations at once (PATCHBAY_WS_SUBSCRIPTION_LIMIT).`;
        return [new GraphQLError(message, { extensions: { code: "TOO_MANY_OPERATIONS" } })];
      }
      const directStream = graphqlWsDirectStream(c.extra.socket, c.extra.request.socket, id);
      const enveloped = yoga.getEnveloped({ ...c, req: c.extra.request, params, directStream });
      let document;
      try {
        document = enveloped.parse(params.query);
      } catch (err) {
        if (err instanceof GraphQLError) return [err]; // a syntax error or a limit: the client's, sent back
        throw err;
      }
      const args = {
        schema: enveloped.schema,
        operationName: params.operationName,
        document,
        variableValues: params.variables,
        contextValue: await enveloped.contextFactory(),
        rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
      };
      const errors = enveloped.validate(args.schema, args.document);
      if (errors.length) return errors;
      return args;
    },
  });

  const wsRoute: WebSocketRoute = {
    match: (pathname) => (pathname === "/graphql" ? {} : undefined),
    handle(socket: WebSocket, request: IncomingMessage) {
      const closed = wsServer.opened(
        {
          protocol: socket.protocol,
          // A client that left while a result was on its way is not an error: there is no one to deliver it to.
          // graphql-ws sends a subscription's next result once this settles. Waiting for each write to complete
          // allowed one message per event-loop turn per subscription, fewer than a busy server's events, so such a
          // subscriber fell further and further behind; the wait is kept for a client that does not read (its
          // unsent bytes beyond SEND_BUFFER_HIGH), so that one is held back rather than buffered without bound.
          send: (data) => {
            if (socket.readyState !== socket.OPEN) return Promise.resolve();
            beforeStreamWrite(request.socket);
            if (socket.bufferedAmount < SEND_BUFFER_HIGH) {
              socket.send(data);
              return Promise.resolve();
            }
            return new Promise<void>((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve())));
          },
          close: (code, reason) => socket.close(code, reason),
          onMessage: (cb) =>
            socket.on("message", async (event) => {
              try {
                await cb(String(event));
              } catch (err) {
                ctx.log.error("graphql websocket", { error: err });
                socket.close(1011, err instanceof Error ? err.message.slice(0, 100) : "error");
              }
            }),
        },
        { request, socket },
      );
      socket.once("close", (code, reason) => closed(code, String(reason)));
    },
  };

  /** Yoga on Express; the writes of an SSE response are a stream's, coalesced under load. */
  const http = (req: Request, res: Response) => {
    if (!req.headers.accept?.includes("text/event-stream")) return yoga(req, res, { req, res });
    coalesceResponseWrites(res);
    return yoga(req, res, { req, res, directStream: sseDirectStream(res) });
  };

  return { http, wsRoute };
}
