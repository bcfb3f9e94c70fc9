import type { Request, Response } from "express";
import type { AppContext } from "../../platform/context.js";
import { getProject } from "../projects/lookup.js";
import type { Gns3Routes } from "../rest/kit.js";
import { projectListeners } from "./listeners.js";
import { openNotificationStream, type StreamScope } from "./stream.js";

/** The GNS3 HTTP notification streams: chunked newline-delimited JSON that never ends on its own. */
export function notificationRoutes(routes: Gns3Routes, ctx: AppContext): void {
  const serve = (scope: StreamScope, req: Request, res: Response) =>
    new Promise<void>((resolve) => {
      // setHeader, not res.set: express would append "; charset=utf-8", which GNS3 does not send.
      res.status(200).setHeader("Content-Type", "application/json");
      res.setHeader("Connection", "close");
      res.flushHeaders();
      const detach = scope.kind === "project" ? projectListeners(ctx).attach(scope.projectId) : () => {};
      const close = openNotificationStream(ctx, scope, (message) => res.write(`${message}\n`));
      req.on("close", () => {
        close();
        detach();
        resolve();
      });
    });

  routes.add("GET", "/v2/notifications", ({ req, res }) => serve({ kind: "controller" }, req, res));
  routes.add("GET", "/v2/projects/{project_id}/notifications", async ({ req, res, params }) => {
    await getProject(ctx, params.project_id);
    await serve({ kind: "project", projectId: params.project_id }, req, res);
  });
}
