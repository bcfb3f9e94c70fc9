import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";

/**
 * Nodes that come back from a topology document (snapshot restore, import, duplicate) must look like nodes made
 * by POST P/nodes: the console reachable on the compute's host, and the always-running builtins (hub, switch)
 * reported started. Before the fix they reported console_host null and status "stopped" forever.
 */
describe("nodes reloaded from a topology document", () => {
  let s: TestServer;
  let pid: string;
  let P: string;

  const state = async (projectId: string) =>
    Object.fromEntries(
      (await call(s.url, "GET", `/v2/projects/${projectId}/nodes`)).body.map((n: any) => [n.name, { console_host: n.console_host, status: n.status }]),
    );
  const expected = () => ({
    PC1: { console_host: s.ctx.config.host, status: "stopped" },
    SW1: { console_host: s.ctx.config.host, status: "started" },
    HUB1: { console_host: s.ctx.config.host, status: "started" },
  });

  beforeAll(async () => {
    s = await startTestServer();
    const r = await call(s.url, "POST", "/v2/projects", { name: "reloaded" });
    pid = r.body.project_id;
    P = `/v2/projects/${pid}`;
    for (const [name, node_type] of [["PC1", "vpcs"], ["SW1", "ethernet_switch"], ["HUB1", "ethernet_hub"]]) {
      expect((await call(s.url, "POST", `${P}/nodes`, { name, node_type, compute_id: "local" })).status).toBe(201);
    }
    expect(await state(pid)).toEqual(expected());
  });
  afterAll(() => s.close());

  it("after a snapshot restore", async () => {
    const snap = (await call(s.url, "POST", `${P}/snapshots`, { name: "s1" })).body;
    const restored = await call(s.url, "POST", `${P}/snapshots/${snap.snapshot_id}/restore`);
    expect(restored.status).toBe(201);
    expect(await state(pid)).toEqual(expected());
  });

  it("after an import, once opened", async () => {
    const zip = Buffer.from(await (await fetch(`${s.url}${P}/export`)).arrayBuffer());
    const id = randomUUID();
    expect((await fetch(`${s.url}/v2/projects/${id}/import?name=reloaded-import`, { method: "POST", body: zip })).status).toBe(201);
    expect((await call(s.url, "POST", `/v2/projects/${id}/open`)).status).toBe(201);
    expect(await state(id)).toEqual(expected());
  });

  it("after a duplicate, once opened", async () => {
    const copy = (await call(s.url, "POST", `${P}/duplicate`, { name: "reloaded-copy" })).body;
    await call(s.url, "POST", `/v2/projects/${copy.project_id}/open`);
    expect(await state(copy.project_id)).toEqual(expected());
  });
});
