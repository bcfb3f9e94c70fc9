import type { IncomingMessage } from "node:http";
import type { Request, Response } from "express";
import { GraphQLError, type ExecutionArgs, type GraphQLSchema } from "graphql";
import { makeServer } from "graphql-ws";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import { createYoga } from "graphql-yoga";
import type { WebSocket } from "ws";
import type { AppContext } from "../context.js";
import type { WebSocketRoute } from "../http/websockets.js";

export function createGraphQL(schema: GraphQLSchema, ctx: AppContext) {
  const yoga = createYoga<{ req: Request; res: Response }, AppContext>({
    schema,
    graphqlEndpoint: "/graphql",
    // GraphiQL is served on GET /graphql with its assets inlined (works offline); subscriptions over graphql-ws.
    graphiql: { subscriptionsProtocol: "WS", title: "Patchbay GraphiQL" },
    renderGraphiQL,
    context: () => ctx,
    logging: false,
    // Unexpected errors reach clients as "Unexpected error." and the log with their cause.
    maskedErrors: {
      maskError(error, message) {
        const original = (error as { originalError?: unknown }).originalError ?? error;
        ctx.log.error("graphql", { error: original instanceof Error ? original.stack : String(original) });
        return new GraphQLError(message, { extensions: { code: "INTERNAL_SERVER_ERROR" } });
      },
    },
  });

  type Enveloped = ReturnType<typeof yoga.getEnveloped>;
  type EnvelopedArgs = ExecutionArgs & { rootValue: Pick<Enveloped, "execute" | "subscribe"> };

  // graphql-ws on the shared listener, using Yoga's envelop so both transports run the same plugins.
  const wsServer = makeServer<Record<string, unknown>, { request: IncomingMessage }>({
    execute: (args) => (args as EnvelopedArgs).rootValue.execute(args),
    subscribe: (args) => (args as EnvelopedArgs).rootValue.subscribe(args),
    onSubscribe: async (c, _id, params) => {
      const enveloped = yoga.getEnveloped({ ...c, req: c.extra.request, params });
      const args = {
        schema: enveloped.schema,
        operationName: params.operationName,
        document: enveloped.parse(params.query),
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
          send: (data) =>
            new Promise<void>((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve()))),
          close: (code, reason) => socket.close(code, reason),
          onMessage: (cb) =>
            socket.on("message", async (event) => {
              try {
                await cb(String(event));
              } catch (err) {
                socket.close(1011, err instanceof Error ? err.message.slice(0, 100) : "error");
              }
            }),
        },
        { request },
      );
      socket.once("close", (code, reason) => closed(code, String(reason)));
    },
  };

  return { yoga, wsRoute };
}
