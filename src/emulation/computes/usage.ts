import fs from "node:fs";
import os from "node:os";
import { oneDecimal, systemUsage } from "./system-usage.js";

/** This host's load, in the shape of GNS3's compute statistics (GET /v2/compute/statistics). */
export interface HostStatistics {
  cpu_usage_percent: number;
  memory_usage_percent: number;
  memory_total: number;
  memory_free: number;
  memory_used: number;
  swap_total: number;
  swap_free: number;
  swap_used: number;
  swap_usage_percent: number;
  disk_usage_percent: number;
  load_average_percent: number[];
}

const percent = (part: number, whole: number) => (whole > 0 ? oneDecimal((100 * part) / whole) : 0);

function swap(): { total: number; free: number } {
  try {
    const info = fs.readFileSync("/proc/meminfo", "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(info)?.[1] ?? 0) * 1024;
    return { total: kb("SwapTotal"), free: kb("SwapFree") };
  } catch {
    return { total: 0, free: 0 }; // not Linux: no portable source
  }
}

export function hostStatistics(dataDir: string): HostStatistics {
  const total = os.totalmem();
  const free = os.freemem();
  const sw = swap();
  const fsStat = fs.statfsSync(dataDir);
  const cpus = os.cpus().length || 1;
  return {
    ...systemUsage(),
    memory_total: total,
    memory_free: free,
    memory_used: total - free,
    swap_total: sw.total,
    swap_free: sw.free,
    swap_used: sw.total - sw.free,
    swap_usage_percent: percent(sw.total - sw.free, sw.total),
    disk_usage_percent: percent((fsStat.blocks - fsStat.bfree) * fsStat.bsize, fsStat.blocks * fsStat.bsize),
    load_average_percent: os.loadavg().map((l) => Math.round((100 * l) / cpus)),
  };
}
