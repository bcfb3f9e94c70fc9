import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 23 points 1-3 in a real browser (Debian's headless chromium, driven over the DevTools protocol): a page of a
 * listed origin reads REST answers (and the headers exposed to it), sends a write that needs a preflight and opens
 * a node's web console; a page of an unlisted origin gets none of it; a Web UI bundle served by Patchbay runs its
 * script (served as JavaScript, under nosniff) and opens the console on its own origin.
 */
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));
const hasChromium = toolAvailable("chromium", CHROMIUM !== undefined);

/** A headless chromium and a DevTools session; `run(url, expression)` opens a tab at url and evaluates in it. */
async function launchBrowser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-chromium-"));
  const child: ChildProcess = spawn(
    CHROMIUM!,
    ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--remote-debugging-port=0", `--user-data-dir=${profile}`, "about:blank"],
    // Its own process group: the helpers it starts (zygote, renderers) go with it.
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  let stderr = "";
  const endpoint = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chromium did not start: ${stderr}`)), 30_000);
    child.stderr!.on("data", (d) => {
      stderr += d;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  const ws = new WebSocket(endpoint, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  ws.on("message", (data) => {
    const m = JSON.parse(String(data));
    const p = m.id !== undefined ? pending.get(m.id) : undefined;
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new Error(JSON.stringify(m.error)));
    else p.resolve(m.result);
  });
  const send = (method: string, params: object = {}, sessionId?: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  return {
    async run(url: string, expression: string): Promise<any> {
      const { targetId } = await send("Target.createTarget", { url });
      const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
      const evaluate = async (expr: string) =>
        (await send("Runtime.evaluate", { expression: expr, awaitPromise: true, returnByValue: true }, sessionId)).result?.value;
      await waitFor(async () => (await evaluate("location.href")) === url && (await evaluate("document.readyState")) === "complete", 20_000, `${url} loaded`);
      try {
        return await evaluate(expression);
      } finally {
        await send("Target.closeTarget", { targetId });
      }
    },
    async close() {
      const exited = new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once("exit", r)));
      await Promise.race([send("Browser.close").catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
      ws.close();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      try {
        process.kill(-child.pid!, "SIGKILL"); // whatever of the group is left
      } catch {}
      await exited;
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What a page's script does with Patchbay at `base`: a read, a write that needs a preflight, a web console. */
const pageScript = (base: string, projectId: string, nodeId: string) => `(async () => {
  const B = ${JSON.stringify(base)};
  const r = {};
  try {
    const res = await fetch(B + "/v2/version");
    r.version = (await res.json()).version;
    r.xRoute = res.headers.get("x-route");
  } catch (e) { r.version = "blocked: " + e.name; }
  try {
    const res = await fetch(B + "/v2/projects/${projectId}", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "renamed by " + location.host }) });
    r.put = res.status;
  } catch (e) { r.put = "blocked: " + e.name; }
  r.console = await new Promise((resolve) => {
    const ws = new WebSocket(B.replace(/^http/, "ws") + "/v2/projects/${projectId}/nodes/${nodeId}/console/ws");
    ws.binaryType = "arraybuffer";
    ws.onopen = () => ws.send("hello\\n");
    ws.onmessage = (m) => { resolve("binary " + (m.data instanceof ArrayBuffer) + ": " + new TextDecoder().decode(m.data)); ws.close(); };
    ws.onerror = () => resolve("error");
    setTimeout(() => resolve("timeout"), 5000);
  });
  return r;
})()`;

describe.skipIf(!hasChromium)("cross-origin and the web console in a real browser (requires chromium)", () => {
  let s: TestServer;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let pages: http.Server;
  let fakeConsole: net.Server;
  let listed: string;
  let unlisted: string;
  let projectId: string;
  let nodeId: string;
  const bundle = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-browser-webui-"));

  beforeAll(async () => {
    // The pages' server: one port, two origins (127.0.0.1 is listed, localhost is not).
    pages = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>page</title>"));
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
    const port = (pages.address() as net.AddressInfo).port;
    listed = `http://127.0.0.1:${port}`;
    unlisted = `http://localhost:${port}`;
    // A Web UI bundle whose script talks to its own origin.
    fs.writeFileSync(path.join(bundle, "index.html"), '<!doctype html><title>UI</title><script src="/static/web-ui/main.0123456789abcdef.js"></script>');
    fs.writeFileSync(path.join(bundle, "main.0123456789abcdef.js"), "window.uiLoaded = true;\n");

    s = await startTestServer({ corsOrigins: [listed], webUiDir: bundle });
    projectId = (await call(s.url, "POST", "/v2/projects", { name: "browser" })).body.project_id;
    const sw = await call(s.url, "POST", `/v2/projects/${projectId}/nodes`, { name: "SW1", node_type: "ethernet_switch", compute_id: "local", console_type: "telnet" });
    nodeId = sw.body.node_id;
    // The switch's console port, played by the test: it greets whoever writes to it.
    fakeConsole = net.createServer((socket) => socket.on("data", (d) => socket.write(`console got ${String(d).trim()}`)));
    await new Promise<void>((resolve) => fakeConsole.listen(sw.body.console, "127.0.0.1", resolve));
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => pages?.close(r));
    await new Promise((r) => fakeConsole?.close(r));
    await s?.close();
    fs.rmSync(bundle, { recursive: true, force: true });
  });

  it("a listed origin's page reads (exposed headers too), writes after its preflight and opens the web console", async () => {
    const r = await browser.run(`${listed}/`, pageScript(s.url, projectId, nodeId));
    expect(r).toEqual({ version: "2.2.59", xRoute: "/v2/version", put: 200, console: "binary true: console got hello" });
    expect((await call(s.url, "GET", `/v2/projects/${projectId}`)).body.name).toBe(`renamed by ${new URL(listed).host}`);
  });

  it("an unlisted origin's page reads nothing, writes nothing and opens no socket", async () => {
    const r = await browser.run(`${unlisted}/`, pageScript(s.url, projectId, nodeId));
    expect(r).toEqual({ version: "blocked: TypeError", put: "blocked: TypeError", console: "error" });
    expect((await call(s.url, "GET", `/v2/projects/${projectId}`)).body.name).toBe(`renamed by ${new URL(listed).host}`);
  });

  it("the Web UI served by Patchbay runs its script and uses the API and the console on its own origin", async () => {
    const r = await browser.run(`${s.url}/static/web-ui/bundled`, `(async () => ({ uiLoaded: window.uiLoaded === true, ...(await ${pageScript("", projectId, nodeId).replace('const B = "";', "const B = location.origin;")}) }))()`);
    expect(r).toEqual({ uiLoaded: true, version: "2.2.59", xRoute: "/v2/version", put: 200, console: "binary true: console got hello" });
    expect((await call(s.url, "GET", `/v2/projects/${projectId}`)).body.name).toBe(`renamed by ${new URL(s.url).host}`);
  });
});
