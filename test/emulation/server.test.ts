import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";
import { CLI } from "../support/cli.js";

/**
 * The controller stream (GET /v2/notifications) as a client sees it while `during` runs and until `expected`
 * events came (or the stream ended), pings left out.
 */
async function controllerEvents(s: TestServer, during: () => Promise<unknown>, expected = 1) {
  const abort = new AbortController();
  const res = await fetch(`${s.url}/v2/notifications`, { signal: abort.signal });
  const reader = res.body!.getReader();
  let text = "";
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    } catch {} // aborted below, or the server went away
  })();
  const events = () =>
    text
      .split("\n")
      .slice(0, -1) // complete lines only
      .map((l) => JSON.parse(l) as { action: string; event: any })
      .filter((m) => m.action !== "ping");
  let ended = false;
  void reading.then(() => (ended = true));
  await waitFor(() => text.includes("\n"), 5000, "the first ping"); // we are attached
  await during();
  await waitFor(() => ended || events().length >= expected, 5000, `${expected} controller event(s)`);
  abort.abort();
  await reading;
  return events();
}

describe("server: settings (2.1 extension)", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());

  it("starts empty, stores any object with a fresh modification_uuid and announces settings.updated", async () => {
    expect(await call(s.url, "GET", "/v2/settings")).toMatchObject({ status: 200, body: {} });
    let posted: Awaited<ReturnType<typeof call>> | undefined;
    const events = await controllerEvents(s, async () => (posted = await call(s.url, "POST", "/v2/settings", { style: "dark", nested: { a: [1, 2] } })));
    expect(posted!.status).toBe(201);
    expect(posted!.headers.get("x-route")).toBe("/v2/settings");
    expect(posted!.body).toMatchObject({ style: "dark", nested: { a: [1, 2] } });
    expect(posted!.body.modification_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(events).toEqual([{ action: "settings.updated", event: posted!.body }]);
    expect((await call(s.url, "GET", "/v2/settings")).body).toEqual(posted!.body);

    const again = await call(s.url, "POST", "/v2/settings", { style: "light" });
    expect(again.body.modification_uuid).not.toBe(posted!.body.modification_uuid);
    expect((await call(s.url, "GET", "/v2/settings")).body).toEqual(again.body); // replaced, as in 2.1
  });

  it("rejects a body that is not a JSON object with GNS3's 400 shape", async () => {
    const arr = await call(s.url, "POST", "/v2/settings", [1, 2]);
    expect(arr.status).toBe(400);
    expect(arr.body).toMatchObject({ status: 400, method: "POST", path: "/v2/settings", request: [1, 2] });
    expect(arr.body.message).toContain("is not of type 'object'");
    const bad = await call(s.url, "POST", "/v2/settings", "{nope");
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^Invalid JSON/);
  });

  it("reads and writes the same settings over GraphQL, with typed errors", async () => {
    const r = await gql(s.url, `mutation($s: JSON!) { updateSettings(input: { settings: $s }) { __typename ... on UpdateSettingsPayload { settings } } }`, {
      s: { fromGraphql: true },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data.updateSettings.settings.fromGraphql).toBe(true);
    expect((await gql(s.url, "{ settings }")).data.settings).toEqual(r.data.updateSettings.settings);
    expect((await call(s.url, "GET", "/v2/settings")).body).toEqual(r.data.updateSettings.settings);
    const bad = await gql(s.url, `mutation { updateSettings(input: { settings: [1] }) { __typename ... on Error { message } } }`);
    expect(bad.data.updateSettings).toEqual({ __typename: "InvalidInputError", message: "Settings must be a JSON object" });
  });
});

describe("server: debug bundle", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer({ local: true, auth: { user: "admin", password: "debug-secret-42" } })));
  afterAll(() => s.close());
  const auth = { authorization: `Basic ${Buffer.from("admin:debug-secret-42").toString("base64")}` };

  it("writes <dataDir>/debug/controller.txt with version, config, computes, projects and process, and no secrets", async () => {
    await call(s.url, "POST", "/v2/computes", { compute_id: "dbg", protocol: "http", host: "127.0.0.1", port: 9, password: "compute-pw-77" }, auth);
    const r = await call(s.url, "POST", "/v2/debug", undefined, auth);
    expect(r.status).toBe(201);
    expect(r.text).toBe("");
    const text = fs.readFileSync(path.join(s.dataDir, "debug", "controller.txt"), "utf8");
    for (const title of ["## Version", "## Configuration", "## Computes", "## Projects", "## Process"]) expect(text).toContain(title);
    expect(text).toContain('"version": "2.2.59"');
    expect(text).toContain(`"pid": ${process.pid}`);
    expect(text).toContain('"compute_id": "dbg"');
    expect(text).not.toContain("debug-secret-42");
    expect(text).not.toContain("compute-pw-77");
  });
});

describe("server: non-local mode", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer({ local: false })));
  afterAll(() => s.close());

  it("refuses /v2/debug and /v2/shutdown with 403", async () => {
    expect(await call(s.url, "POST", "/v2/debug")).toMatchObject({ status: 403, body: { message: "You can only debug a local server", status: 403 } });
    expect(await call(s.url, "POST", "/v2/shutdown")).toMatchObject({ status: 403, body: { message: "You can only stop a local server", status: 403 } });
    expect(fs.existsSync(path.join(s.dataDir, "debug"))).toBe(false);
    expect((await call(s.url, "GET", "/v2/version")).status).toBe(200); // still running
  });
});

describe("server: shutdown", () => {
  it("closes every opened project (project.closed) before answering, then closes the server", async () => {
    const s = await startTestServer({ local: true });
    try {
      const project = await call(s.url, "POST", "/v2/projects", { name: "to-close" });
      expect(project.status).toBe(201);
      const events = await controllerEvents(s, async () => expect((await call(s.url, "POST", "/v2/shutdown")).status).toBe(201));
      expect(events).toContainEqual({ action: "project.closed", event: expect.objectContaining({ project_id: project.body.project_id, status: "closed" }) });
      await s.closed;
      await expect(fetch(`${s.url}/v2/version`)).rejects.toThrow();
    } finally {
      await s.close();
    }
  });

  it("answers 201 and the process closes and exits with status 0", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-shutdown-"));
    const child = spawn(process.execPath, [...CLI, "--port", "0", "--data-dir", dataDir], {
      env: { ...process.env, DATABASE_URL: "", PATCHBAY_LOCAL: "true" },
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (d) => {
        const m = /Patchbay on (\S+)/.exec(String(d));
        if (m) resolve(m[1]);
      });
      child.once("exit", () => reject(new Error("exited early")));
    });
    const r = await call(url, "POST", "/v2/shutdown");
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/octet-stream");
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/v2/version`)).rejects.toThrow();
  });
});
