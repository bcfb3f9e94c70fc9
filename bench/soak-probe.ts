/**
 * Preloaded into the Patchbay child by bench/soak.ts (`node --import ./bench/soak-probe.ts src/main.ts`): reports the
 * server's own event-loop delay and heap over the IPC channel, and writes a heap snapshot when asked. Bench
 * instrumentation only; the product has no such endpoint.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import v8 from "node:v8";

const REPORT_MS = 5000;

if (process.send) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const report = setInterval(() => {
    const ms = (ns: number) => ns / 1e6;
    const mem = process.memoryUsage();
    process.send!({
      probe: {
        p50: ms(delay.percentile(50)),
        p99: ms(delay.percentile(99)),
        max: ms(delay.max),
        heapUsed: mem.heapUsed,
        external: mem.external,
        arrayBuffers: mem.arrayBuffers,
      },
    });
    delay.reset();
  }, REPORT_MS);
  report.unref();
  process.on("message", (m: { heapSnapshot?: string }) => {
    if (m?.heapSnapshot) process.send!({ heapSnapshotWritten: v8.writeHeapSnapshot(m.heapSnapshot) });
  });
  // The IPC channel must not keep the server alive once it has closed.
  process.channel?.unref();
}
