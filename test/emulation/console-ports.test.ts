import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { call, portWindow, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);

/**
 * Console ports are held while a project is open, as GNS3's port manager holds them: closing a project or
 * deleting a node gives them back, opening takes them again (a node's previous port when still free).
 */
describe("emulation: console ports follow the project lifecycle", () => {
  let s: TestServer;
  let lo: number;
  beforeAll(async () => {
    const w = portWindow();
    lo = w.consolePorts[0];
    s = await startTestServer({ ...w, consolePorts: [lo, lo + 2] }); // three console ports
  });
  afterAll(() => s.close());

  const project = async (name: string) => (await call(s.url, "POST", "/v2/projects", { name })).body.project_id as string;
  const pc = async (pid: string, name: string) => call(s.url, "POST", `/v2/projects/${pid}/nodes`, { name, node_type: "vpcs", compute_id: "local" });
  const consoles = async (pid: string) =>
    Object.fromEntries(((await call(s.url, "GET", `/v2/projects/${pid}/nodes`)).body as any[]).map((n) => [n.name, n.console]));
  const heldPorts = async () => (await call(s.url, "GET", "/v2/computes/local/ports")).body.console_ports as number[];

  it("gives ports back on close, lends them to another project, and re-checks them on open", async () => {
    const A = await project("ports-a");
    const a1 = (await pc(A, "A1")).body;
    const a2 = (await pc(A, "A2")).body;
    expect([a1.console, a2.console]).toEqual([lo, lo + 1]);

    expect((await call(s.url, "POST", `/v2/projects/${A}/close`)).status).toBe(204);
    // GNS3 lists a closed project's nodes from its .gns3: the last ports, no longer held.
    expect(await consoles(A)).toEqual({ A1: lo, A2: lo + 1 });
    expect(await heldPorts()).toEqual([]);

    const B = await project("ports-b");
    const b1 = (await pc(B, "B1")).body;
    expect(b1.console).toBe(lo); // A1's old port, free since A closed
    expect((await pc(B, "B2")).body.console).toBe(lo + 1);
    expect((await pc(B, "B3")).body.console).toBe(lo + 2);
    expect((await pc(B, "B4")).status).toBe(409); // the range is full: no port is held twice

    // A cannot take its ports while B holds all three: the open is refused and A stays closed.
    const refused = await call(s.url, "POST", `/v2/projects/${A}/open`);
    expect(refused.status).toBe(409);
    expect((await call(s.url, "GET", `/v2/projects/${A}`)).body.status).toBe("closed");

    // A node delete frees its port.
    const b2 = ((await call(s.url, "GET", `/v2/projects/${B}/nodes`)).body as any[]).find((n) => n.name === "B2");
    const b3 = ((await call(s.url, "GET", `/v2/projects/${B}/nodes`)).body as any[]).find((n) => n.name === "B3");
    expect((await call(s.url, "DELETE", `/v2/projects/${B}/nodes/${b2.node_id}`)).status).toBe(204);
    expect((await call(s.url, "DELETE", `/v2/projects/${B}/nodes/${b3.node_id}`)).status).toBe(204);
    expect(await heldPorts()).toEqual([lo]);

    // Re-opened, A2 keeps its port; A1's is B1's now, so A1 gets the lowest free one.
    expect((await call(s.url, "POST", `/v2/projects/${A}/open`)).status).toBe(201);
    expect(await consoles(A)).toEqual({ A1: lo + 2, A2: lo + 1 });
    expect((await call(s.url, "GET", `/v2/projects/${A}/nodes/${a2.node_id}`)).body.console).toBe(lo + 1);
    expect((await heldPorts()).sort()).toEqual([lo, lo + 1, lo + 2]);

    if (hasVpcs) {
      // Nothing collides on the host either: A's moved node and B's node both run on their consoles.
      expect((await call(s.url, "POST", `/v2/projects/${A}/nodes/${a1.node_id}/start`)).status).toBe(200);
      expect((await call(s.url, "POST", `/v2/projects/${B}/nodes/${b1.node_id}/start`)).status).toBe(200);
      expect((await call(s.url, "GET", `/v2/projects/${A}/nodes/${a1.node_id}`)).body).toMatchObject({ status: "started", console: lo + 2 });
    }
    for (const p of [A, B]) expect((await call(s.url, "DELETE", `/v2/projects/${p}`)).status).toBe(204);
    expect(await heldPorts()).toEqual([]);
  });

  it("a lab closed and re-opened on the same machine keeps its ports", async () => {
    const C = await project("ports-c");
    await pc(C, "C1");
    await pc(C, "C2");
    const before = await consoles(C);
    await call(s.url, "POST", `/v2/projects/${C}/close`);
    await call(s.url, "POST", `/v2/projects/${C}/open`);
    expect(await consoles(C)).toEqual(before);
    await call(s.url, "DELETE", `/v2/projects/${C}`);
  });
});
