import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { computeJson, computeTarget } from "./client.js";
import { LOCAL_ID } from "./model.js";
import { getCompute } from "./operations.js";

/** GNS3's port manager report: the configured ranges and the ports currently reserved in them. */
export interface PortUsage {
  console_port_range: [number, number];
  console_ports: number[];
  udp_port_range: [number, number];
  udp_ports: number[];
}

/** This host: console ports held by nodes of opened projects, UDP ports held by the runtime's links. */
export async function localPortUsage(ctx: AppContext): Promise<PortUsage> {
  const rows = await ctx.db.node.findMany({
    where: { computeId: LOCAL_ID, consoleHeld: true },
    select: { console: true },
    orderBy: { console: "asc" },
  });
  return {
    console_port_range: ctx.config.consolePorts,
    console_ports: rows.map((r) => r.console!),
    udp_port_range: ctx.config.udpPorts,
    udp_ports: ctx.services.emulation.runtime.pool.inUse,
  };
}

/** A compute's report: the local one directly, a remote one from its compute API (as GNS3's controller asks it). */
export async function computePorts(ctx: AppContext, computeId: string): Promise<PortUsage> {
  await getCompute(ctx, computeId); // 404 for an unknown compute
  if (computeId === LOCAL_ID) return localPortUsage(ctx);
  return computeJson<PortUsage>(await computeTarget(ctx, computeId), "GET", "/v2/compute/network/ports");
}

export function computePortRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("GET", "/v2/computes/{compute_id}/ports", async ({ res, params }) => sendJson(res, 200, await computePorts(ctx, params.compute_id)));
  routes.add("GET", "/v2/compute/network/ports", async ({ res }) => sendJson(res, 200, await localPortUsage(ctx)));
}
