import net from "node:net";

/**
 * Fails at once when the port is taken, before migrations and crash recovery spend seconds for nothing. The
 * listener's own error (a race with another process) is reported the same way (startup-errors.ts).
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
