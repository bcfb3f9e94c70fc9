import type { NextFunction, Request, Response } from "express";
import type { WebSocketRoute } from "../http/websockets.js";

export interface GraphQLFace {
  /** The Express handler of the GraphQL endpoint (HTTP: queries, mutations, SSE, GraphiQL, uploads). */
  http(req: Request, res: Response): unknown;
  /** graphql-ws on the endpoint's path. */
  wsRoute: WebSocketRoute;
}

/**
 * The GraphQL face built when it is first asked for instead of before the listener opens: loading GraphQL, Yoga
 * and the features' types and building the schema is a third of the server's start-up, and REST clients (the GNS3
 * GUI, Ansible) never need it. The first GraphQL request (HTTP, or a graphql-ws upgrade) waits for the build;
 * a build failure answers that request with an error and the next request tries again.
 */
export function graphqlOnFirstUse(path: string, build: () => Promise<GraphQLFace>) {
  let building: Promise<GraphQLFace> | undefined;
  let built: GraphQLFace | undefined;
  const load = () =>
    (building ??= build().then(
      (face) => (built = face),
      (e) => {
        building = undefined;
        throw e;
      },
    ));
  return {
    path,
    http: (req: Request, res: Response, next: NextFunction) => void load().then((f) => f.http(req, res), next),
    wsRoute: {
      match: (pathname: string) => (pathname === path ? {} : undefined),
      // Before the upgrade: the built route takes the socket synchronously once it is open.
      accept: async () => void (await load()),
      handle: (...args: Parameters<WebSocketRoute["handle"]>) => built!.wsRoute.handle(...args),
    } satisfies WebSocketRoute,
  };
}
