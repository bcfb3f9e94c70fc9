import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AppContext } from "../../platform/context.js";
import { ForbiddenError } from "../../platform/core/errors.js";
import { listComputes } from "../computes/operations.js";
import { closeProject } from "../projects/operations.js";
import { GNS3_VERSION } from "../core/version.js";

/**
 * POST /v2/debug: a support bundle a user can attach to a bug report, written to <dataDir>/debug/controller.txt.
 * It must never carry secrets: passwords and the database URL's credentials are left out.
 */
export async function writeDebugBundle(ctx: AppContext): Promise<string> {
  if (!ctx.config.local) throw new ForbiddenError("You can only debug a local server");
  const { auth, databaseUrl, redisUrl, ...config } = ctx.config;
  const projects = await ctx.db.project.findMany({
    orderBy: { createdAt: "asc" },
    select: { id: true, name: true, status: true, _count: { select: { nodes: true, links: true, drawings: true, snapshots: true } } },
  });
  const sections: [string, unknown][] = [
    ["Version", { version: GNS3_VERSION, node: process.version, platform: `${process.platform} ${os.release()} ${process.arch}` }],
    [
      "Configuration",
      {
        ...config,
        database: withoutCredentials(databaseUrl),
        redis: redisUrl ? withoutCredentials(redisUrl) : null,
        auth: auth ? { user: auth.user, password: "********" } : null,
      },
    ],
    ["Computes", await listComputes(ctx)],
    ["Projects", projects.map(({ _count, ...p }) => ({ ...p, ..._count }))],
    [
      "Process",
      {
        pid: process.pid,
        uptime_seconds: Math.round(process.uptime()),
        memory: process.memoryUsage(),
        event_subscriptions: ctx.bus.subscriberCount(),
        cpus: os.cpus().length,
        load_average: os.loadavg(),
        hostname: os.hostname(),
      },
    ],
  ];
  const text = sections.map(([title, value]) => `## ${title}\n${JSON.stringify(value, null, 4)}\n`).join("\n");
  const dir = path.join(ctx.config.dataDir, "debug");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "controller.txt");
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

function withoutCredentials(url: string): string {
  if (url.startsWith("file:")) return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = "********";
    return u.toString();
  } catch {
    return "(unparsable)";
  }
}

/**
 * POST /v2/shutdown: closes every opened project first (project.closed, topology saved, nodes stopped), as GNS3
 * does before answering, then lets the server close through its normal path and the process exit. Returns the
 * ids of the projects it closed.
 */
export async function shutdownServer(ctx: AppContext): Promise<string[]> {
  if (!ctx.config.local) throw new ForbiddenError("You can only stop a local server");
  ctx.log.info("shutting down", { reason: "requested over the API" });
  const opened = await ctx.db.project.findMany({ where: { status: "opened" }, select: { id: true } });
  await Promise.all(opened.map((p) => closeProject(ctx, p.id)));
  ctx.requestShutdown();
  return opened.map((p) => p.id);
}
