import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.js";
import { call, startTestServer, type TestServer } from "../support/server.js";

/** Issue 8, item 4: compute passwords stay out of logs and never follow a compute to another endpoint. */

/** A stand-in compute that records the Authorization header of every request and answers 401. */
async function recordingListener() {
  const seen: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(401).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { seen, port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(r)) };
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("compute credentials", () => {
  let s: TestServer;
  const logged: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  beforeAll(async () => {
    // The request log goes to stdout: keep a copy of every line the server writes during these tests.
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
    s = await startTestServer({ logRequests: true });
  });
  afterAll(async () => {
    process.stdout.write = write;
    await s.close();
  });

  it("redacts passwords given in the query and user:password@ in URLs from the request log", async () => {
    const r = await call(s.url, "POST", "/v2/computes?password=hunter2-query", { compute_id: "q1", protocol: "http", host: "127.0.0.1", port: 9, user: "bob" });
    expect(r.status).toBe(201);
    await call(s.url, "GET", `/v2/computes?next=${encodeURIComponent("http://bob:hunter3-url@host/x")}`);
    await waitFor(() => logged.some((l) => l.includes('"status":201') && l.includes("/v2/computes")));
    const lines = logged.filter((l) => l.includes('"msg":"request"'));
    expect(lines.some((l) => l.includes("password=***"))).toBe(true);
    expect(lines.some((l) => l.includes("bob%3A***%40host"))).toBe(true);
    expect(lines.join("")).not.toMatch(/hunter2|hunter3/);
  });

  it("does not send the stored password to a new host; sends a new one when given", async () => {
    const first = await recordingListener();
    const second = await recordingListener();
    const third = await recordingListener();
    try {
      const created = await call(s.url, "POST", "/v2/computes", {
        compute_id: "moving",
        protocol: "http",
        host: "127.0.0.1",
        port: first.port,
        user: "admin",
        password: "old-secret",
      });
      expect(created.status).toBe(201);
      expect(created.body).not.toHaveProperty("password");
      await waitFor(() => first.seen.length > 0, 10_000);
      expect(first.seen[0]).toBe(basic("admin", "old-secret"));

      const moved = await call(s.url, "PUT", "/v2/computes/moving", { port: second.port });
      expect(moved.status).toBe(200);
      await waitFor(() => second.seen.length > 0, 10_000);
      expect(second.seen.every((h) => h !== basic("admin", "old-secret"))).toBe(true);
      expect(second.seen[0]).toBe(basic("admin", ""));

      // Renaming keeps the endpoint, so the password it was given for stays; moving with a password uses it.
      expect((await call(s.url, "PUT", "/v2/computes/moving", { name: "renamed" })).status).toBe(200);
      const again = await call(s.url, "PUT", "/v2/computes/moving", { port: third.port, password: "new-secret" });
      expect(again.status).toBe(200);
      await waitFor(() => third.seen.length > 0, 10_000);
      expect(third.seen[0]).toBe(basic("admin", "new-secret"));
    } finally {
      await call(s.url, "DELETE", "/v2/computes/moving");
      await Promise.all([first.close(), second.close(), third.close()]);
    }
  });
});
