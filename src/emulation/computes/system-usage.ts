import os from "node:os";

/** CPU and memory usage as GNS3's ping reports them (psutil-like percentages, one decimal). */
let previous = cpuTimes();

function cpuTimes() {
  let idle = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.irq + times.idle;
  }
  return { idle, total };
}

export const oneDecimal = (n: number) => Math.round(n * 10) / 10;

/** CPU busy share since the previous call (like psutil.cpu_percent(interval=None)); 0 on the very first call. */
export function systemUsage(): { cpu_usage_percent: number; memory_usage_percent: number } {
  const now = cpuTimes();
  const total = now.total - previous.total;
  const busy = total - (now.idle - previous.idle);
  previous = now;
  const cpu = total > 0 ? (busy / total) * 100 : 0;
  const memory = (1 - os.freemem() / os.totalmem()) * 100;
  return { cpu_usage_percent: oneDecimal(Math.min(100, Math.max(0, cpu))), memory_usage_percent: oneDecimal(memory) };
}
