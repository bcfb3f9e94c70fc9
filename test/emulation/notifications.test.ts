import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { pause, waitFor } from "../support/wait.js";
import { makeNode, makeProject, ndjsonStream } from "./nodes-support.js";

const PING = /^\{"action": "ping", "event": \{"cpu_usage_percent": \d+(\.\d)?, "memory_usage_percent": \d+(\.\d)?\}\}$/;

/** A WebSocket client collecting text frames. */
async function wsStream(url: string) {
  const ws = new WebSocket(url);
  const frames: { text: string; binary: boolean }[] = [];
  ws.on("message", (data, binary) => frames.push({ text: String(data), binary }));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return {
    ws,
    frames,
    async take(n: number, ms = 3000) {
      const deadline = Date.now() + ms;
      while (frames.length < n) {
        if (Date.now() > deadline) throw new Error(`timeout: ${frames.length}/${n} frames`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return frames.slice(0, n);
    },
  };
}

/** The server's auto_close delay (GNS3 waits 5 s; the knob keeps the suite from waiting that long). */
const AUTO_CLOSE_MS = 1000;

describe("emulation: notification streams", () => {
  let s: TestServer;
  let pid: string;
  let wsBase: string;
  beforeAll(async () => {
    s = await startTestServer({ autoCloseDelayMs: AUTO_CLOSE_MS });
    pid = await makeProject(s);
    wsBase = s.url.replace(/^http/, "ws");
  });
  afterAll(() => s.close());

  it("HTTP project stream: chunked NDJSON, ping first, events in order with GNS3 serialisation", async () => {
    const stream = ndjsonStream(`${s.url}/v2/projects/${pid}/notifications`);
    const res = await stream.ready;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("transfer-encoding")).toBe("chunked");
    expect(res.headers.get("x-route")).toBe("/v2/projects/{project_id}/notifications");
    const [ping] = await stream.take(1);
    expect(ping).toMatch(PING);
    const pc = await makeNode(s, pid, { name: "PC1", node_type: "vpcs" });
    const moved = (await call(s.url, "PUT", `/v2/projects/${pid}/nodes/${pc.node_id}`, { x: 42 })).body;
    await call(s.url, "PUT", `/v2/projects/${pid}/nodes/${pc.node_id}`, { x: 42 }); // no change, no event
    await call(s.url, "DELETE", `/v2/projects/${pid}/nodes/${pc.node_id}`);
    const lines = (await stream.take(4)).slice(1);
    stream.close();
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { action: "node.created", event: pc },
      { action: "node.updated", event: moved },
      { action: "node.deleted", event: moved },
    ]);
    // Sorted keys, Python's ", " / ": " separators, one line per message.
    expect(lines[0]).toMatch(/^\{"action": "node.created", "event": \{"command_line": "", "compute_id": "local", /);
    expect(lines[0]).toContain(`"ports": [{"adapter_number": 0, "data_link_types": {"Ethernet": "DLT_EN10MB"}, "link_type": "ethernet", `);
  });

  it("does not leak another project's events", async () => {
    const other = await makeProject(s);
    const stream = ndjsonStream(`${s.url}/v2/projects/${pid}/notifications`);
    await stream.take(1);
    await makeNode(s, other, { name: "Elsewhere", node_type: "vpcs" });
    const mine = await makeNode(s, pid, { name: "Here", node_type: "vpcs" });
    const [, line] = await stream.take(2);
    stream.close();
    expect(JSON.parse(line).event.node_id).toBe(mine.node_id);
  });

  it("WebSocket project stream: one text frame per message, ping first", async () => {
    const c = await wsStream(`${wsBase}/v2/projects/${pid}/notifications/ws`);
    const [ping] = await c.take(1);
    expect(ping.binary).toBe(false);
    expect(ping.text).toMatch(PING);
    const node = await makeNode(s, pid, { name: "WS1", node_type: "ethernet_hub" });
    const [, frame] = await c.take(2);
    expect(frame.text.endsWith("}")).toBe(true);
    expect(JSON.parse(frame.text)).toEqual({ action: "node.created", event: node });
    c.ws.send("ignored");
    c.ws.close();
  });

  it("controller streams (HTTP and WebSocket) start with a ping", async () => {
    const http = ndjsonStream(`${s.url}/v2/notifications`);
    expect((await http.ready).headers.get("x-route")).toBe("/v2/notifications");
    expect((await http.take(1))[0]).toMatch(PING);
    http.close();
    const c = await wsStream(`${wsBase}/v2/notifications/ws`);
    expect((await c.take(1))[0].text).toMatch(PING);
    c.ws.close();
  });

  it("unknown project: 404 JSON on HTTP and on the WebSocket upgrade", async () => {
    const ghost = "caf18f43-dc85-4816-bfbd-e61ceddab763";
    const r = await call(s.url, "GET", `/v2/projects/${ghost}/notifications`);
    expect(r).toMatchObject({ status: 404, body: { message: `Project ID ${ghost} doesn't exist`, status: 404 } });
    const ws = new WebSocket(`${wsBase}/v2/projects/${ghost}/notifications/ws`);
    const status = await new Promise<number>((resolve) => ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(404);
  });

  it.concurrent("pings again after 5 s of silence", async () => {
    const stream = ndjsonStream(`${s.url}/v2/projects/${pid}/notifications`);
    const t0 = Date.now();
    await stream.take(1);
    const [, second] = await stream.take(2, 7000);
    stream.close();
    expect(second).toMatch(PING);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4900);
  }, 10_000);

  it.concurrent("auto_close: closes the project once the delay after its last listener left has passed, unless one re-attached", async () => {
    const auto = await makeProject(s, { autoClose: true });
    const status = async () => (await s.ctx.db.project.findUnique({ where: { id: auto } }))?.status;
    const controller = ndjsonStream(`${s.url}/v2/notifications`);
    await controller.take(1);

    // A listener that leaves and another that attaches within the grace period: the project stays open.
    const first = await wsStream(`${wsBase}/v2/projects/${auto}/notifications/ws`);
    await first.take(1);
    first.ws.close();
    await pause(AUTO_CLOSE_MS / 2);
    const second = ndjsonStream(`${s.url}/v2/projects/${auto}/notifications`);
    await second.take(1);
    await pause(AUTO_CLOSE_MS + 500); // the first listener's close must not come
    expect(await status()).toBe("opened");

    // The last listener leaves: closed after the delay, announced on the controller stream.
    second.close();
    const left = Date.now();
    const closed = (l: string) => {
      const m = JSON.parse(l);
      return m.action === "project.closed" && m.event.project_id === auto;
    };
    const announced = await waitFor(() => controller.lines.find(closed), AUTO_CLOSE_MS + 10_000, "project.closed");
    expect(Date.now() - left).toBeGreaterThanOrEqual(AUTO_CLOSE_MS - 50);
    controller.close();
    expect(JSON.parse(announced).event).toMatchObject({ project_id: auto, status: "closed" });
    expect(await status()).toBe("closed");
  }, 20_000);

  it.concurrent("a project without auto_close stays open when its listener leaves", async () => {
    const keep = await makeProject(s, { autoClose: false });
    const c = await wsStream(`${wsBase}/v2/projects/${keep}/notifications/ws`);
    await c.take(1);
    c.ws.close();
    await pause(AUTO_CLOSE_MS + 600); // a close must not come
    expect((await s.ctx.db.project.findUnique({ where: { id: keep } }))?.status).toBe("opened");
  }, 10_000);
});
