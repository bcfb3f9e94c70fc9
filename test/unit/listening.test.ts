import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listensOn } from "../../src/emulation/runtime/listening.js";

/**
 * The vpcs readiness check reads /proc instead of connecting: a connection would be a console client that
 * swallows the PC's banner and first prompt (the runtime-lifecycle flake under load).
 */
describe.skipIf(process.platform !== "linux")("unit: listening check without connecting", () => {
  const server = net.createServer();
  let accepted = 0;
  server.on("connection", (s) => {
    accepted++;
    s.destroy();
  });
  beforeAll(() => new Promise<void>((r) => server.listen(0, "0.0.0.0", r)));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("sees a listening socket of the given processes, and never connects to it", async () => {
    const port = (server.address() as net.AddressInfo).port;
    expect(await listensOn([process.pid], port)).toBe(true);
    expect(await listensOn([process.pid, 999_999_999], port)).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(accepted).toBe(0);
  });

  it("is false for another process's listener and for a port nobody listens on", async () => {
    const port = (server.address() as net.AddressInfo).port;
    expect(await listensOn([process.ppid], port)).toBe(false);
    expect(await listensOn([], port)).toBe(false);
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const free = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    expect(await listensOn([process.pid], free)).toBe(false);
  });
});
