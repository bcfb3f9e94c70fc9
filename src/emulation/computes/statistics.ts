import type { AppContext } from "../../platform/context.js";
import { LOCAL_ID } from "./model.js";
import { listComputes } from "./operations.js";
import { hostStatistics, type HostStatistics } from "./usage.js";

export interface ComputeStatistics {
  compute_id: string;
  compute_name: string;
  statistics: HostStatistics;
}

/** GET /v2/statistics: the local host measured now, each connected remote compute as of its last poll. */
export async function controllerStatistics(ctx: AppContext): Promise<ComputeStatistics[]> {
  const monitor = ctx.services.emulation.computes;
  const out: ComputeStatistics[] = [];
  for (const c of await listComputes(ctx)) {
    const statistics = c.compute_id === LOCAL_ID ? hostStatistics(ctx.config.dataDir) : monitor.statistics(c.compute_id);
    if (statistics) out.push({ compute_id: c.compute_id, compute_name: c.name, statistics });
  }
  return out;
}
