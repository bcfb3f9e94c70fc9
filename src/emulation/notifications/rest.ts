import type { Request, Response } from "express";
import type { AppContext } from "../../platform/context.js";
import { getProject } from "../projects/lookup.js";
import type { Gns3Routes } from "../rest/kit.js";
import { openNotificationStream, writeToStream, type StreamScope } from "./stream.js";

/**
 * Serves one GNS3 HTTP notification stream (chunked newline-delimited JSON) until the client leaves. A project
 * stream counts as a listener of its project for auto_close unless `countListener` is false.
 */
export function serveNotificationStream(
  ctx: AppContext,
  scope: StreamScope,
  req: Request,
  res: Response,
  countListener = scope.kind === "project",
): Promise<void> {
  return new Promise<void>((resolve) => {
    // setHeader, not res.set: express would append "; charset=utf-8", which GNS3 does not send.
    res.status(200).setHeader("Content-Type", "application/json");
    res.setHeader("Connection", "close");
    res.flushHeaders();
    const detach = countListener && scope.kind === "project" ? ctx.services.emulation.listeners.attach(scope.projectId) : () => {};
    // Each message is framed once for all streams and written past res (the headers are out).
    const socket = req.socket;
    const close = openNotificationStream(ctx, scope, (message) => writeToStream(ctx, socket, message.forResponse(res)));
    req.on("close", () => {
      close();
      detach();
      resolve();
    });
  });
}

/** The GNS3 HTTP notification streams: chunked newline-delimited JSON that never ends on its own. */
export function notificationRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("GET", "/v2/notifications", ({ req, res }) => serveNotificationStream(ctx, { kind: "controller" }, req, res));
  routes.add("GET", "/v2/projects/{project_id}/notifications", async ({ req, res, params }) => {
    await getProject(ctx, params.project_id);
    await serveNotificationStream(ctx, { kind: "project", projectId: params.project_id }, req, res);
  });
}
