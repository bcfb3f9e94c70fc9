import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { step } from "../support/steps.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";
import { globalId } from "../../src/platform/graphql/global-id.js";

/**
 * Issue 23 point 5: Patchbay's own lab page (/lab) in a real browser — Playwright driving Debian's chromium against
 * the real server on an ephemeral port, with credentials set (the browser gives them as a user would). The page
 * opens a project and shows its nodes; a node started from the page turns green; its console (xterm.js over the
 * `nodeConsole` subscription) answers `show ip`; a ping shows in the link's packets pane; a node renamed, moved,
 * created and deleted over REST changes on the page while it watches; a volume's quota rules follow REST changes.
 * The page loads nothing from another origin.
 *
 * PATCHBAY_LAB_SCREENSHOT=docs/lab-page.png writes the README's screenshot (the page after the ping).
 */
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));
const hasChromium = toolAvailable("chromium", CHROMIUM !== undefined);
const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);
const AUTH = { user: "lab", password: "lab-secret" };
const CREDENTIALS = { authorization: `Basic ${Buffer.from(`${AUTH.user}:${AUTH.password}`).toString("base64")}` };

/** How the page names a node: by its global id, as a GraphQL client's cache does. */
const onPage = (nodeId: string) => globalId("EmulatedNode", nodeId);

/** What the user sees of the page's state: the node list's entries and the graph's elements. */
const nodeItem = (page: Page, name: string) => page.locator("#nodes li", { has: page.locator(".name", { hasText: new RegExp(`^${name}$`) }) });
interface Graph {
  nodes: { id: string; label: string; status: string; color: string; position: { x: number; y: number } }[];
  edges: { id: string; source: string; target: string }[];
  drawings: number;
}
const graph = (page: Page): Promise<Graph> =>
  page.evaluate(() => {
    const cy = (window as any).patchbayLab.cy;
    return {
      nodes: cy.nodes(".lab-node").map((n: any) => ({ id: n.id(), label: n.data("label"), status: n.data("status"), color: n.style("background-color"), position: n.position() })),
      edges: cy.edges().map((e: any) => ({ id: e.id(), source: e.source().id(), target: e.target().id() })),
      drawings: cy.nodes(".drawing").length,
    };
  });
/** The terminal's lines, scrollback included, as xterm.js holds them (what it draws is a window of these). */
const terminalText = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const buffer = (window as any).patchbayLab.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
    return lines.join("\n");
  });

describe.skipIf(!hasChromium || !hasVpcs)("the lab page in a real browser (requires chromium and vpcs)", () => {
  let s: TestServer;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const foreign: string[] = [];
  const browserLog: string[] = []; // the page's console and errors, printed when a test fails
  let P: string;
  const ids: Record<string, string> = {};
  let L: string;
  const api = (method: string, url: string, body?: unknown) => call(s.url, method, url, body, CREDENTIALS);

  beforeAll(async () => {
    s = await startTestServer({ auth: AUTH });
    profile = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-lab-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
      httpCredentials: { username: AUTH.user, password: AUTH.password, origin: s.url },
      viewport: { width: 1400, height: 860 },
      timeout: 60_000,
    });
    page = context.pages()[0] ?? (await context.newPage());
    // Offline: anything the page asks of another origin is recorded and refused.
    await context.route(
      (url) => url.origin !== s.url,
      (route) => {
        foreign.push(route.request().url());
        return route.abort();
      },
    );
    page.on("console", (m) => browserLog.push(`console.${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => browserLog.push(`page error: ${e.message}`));
    page.on("websocket", (ws) => {
      browserLog.push(`${new Date().toISOString()} websocket ${ws.url()}`);
      ws.on("close", () => browserLog.push(`${new Date().toISOString()} websocket closed`));
      ws.on("socketerror", (e) => browserLog.push(`${new Date().toISOString()} websocket error ${e}`));
    });
    // Generous: CI's machine is shared; the waits end as soon as their condition holds.
    page.setDefaultTimeout(30_000);
    page.setDefaultNavigationTimeout(60_000);
  }, 90_000);
  afterEach((t) => {
    if (t.task.result?.state === "fail" && browserLog.length) console.error(`the page's log:\n${browserLog.join("\n")}`);
  });
  afterAll(async () => {
    await context?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await s?.close();
  }, 60_000);

  it("is behind the server's credentials and origin policy, and linked from the start page", async () => {
    for (const p of ["/lab", "/lab/lab.js", "/lab/lab.css"]) expect((await call(s.url, "GET", p)).status, p).toBe(401);
    const cross = await call(s.url, "GET", "/lab/lab.js", undefined, { ...CREDENTIALS, origin: "https://elsewhere.example", "sec-fetch-site": "cross-site" });
    expect(cross.status).toBe(403);
    const js = await fetch(`${s.url}/lab/lab.js`, { headers: { ...CREDENTIALS, "accept-encoding": "gzip" } });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
    expect(js.headers.get("content-encoding")).toBe("gzip");
    expect(js.headers.get("x-content-type-options")).toBe("nosniff");
    expect((await js.text()).length).toBeGreaterThan(100_000); // fetch decompressed it: the bundle itself
    expect((await call(s.url, "GET", "/lab/lab.js.LEGAL.txt", undefined, CREDENTIALS)).text).toMatch(/cytoscape|xterm/i);
    expect((await call(s.url, "GET", "/lab/index.html", undefined, CREDENTIALS)).status).toBe(404); // only the names of the page
    const html = await call(s.url, "GET", "/lab", undefined, CREDENTIALS);
    expect(html.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect((await call(s.url, "GET", "/start", undefined, CREDENTIALS)).text).toContain('href="/lab"');
  });

  it("opens a project, starts a node that turns green, answers show ip in its console and shows a ping's packets", async () => {
    await step("a project with PC1 — PC2 (names and addresses from their startup.vpc) and a note", async () => {
      P = (await api("POST", "/v2/projects", { name: "Lab page" })).body.project_id;
      for (const [i, name] of ["PC1", "PC2"].entries()) {
        const r = await api("POST", `/v2/projects/${P}/nodes`, {
          name,
          node_type: "vpcs",
          compute_id: "local",
          x: -200 + i * 300,
          y: -40,
        });
        expect(r.status, r.text).toBe(201);
        ids[name] = r.body.node_id;
        const script = await api("POST", `/v2/projects/${P}/nodes/${ids[name]}/files/startup.vpc`, `set pcname ${name}\nip 10.0.0.${i + 1}/24\n`);
        expect(script.status, script.text).toBe(201);
      }
      const l = await api("POST", `/v2/projects/${P}/links`, {
        nodes: [
          { node_id: ids.PC1, adapter_number: 0, port_number: 0 },
          { node_id: ids.PC2, adapter_number: 0, port_number: 0 },
        ],
      });
      expect(l.status, l.text).toBe(201);
      L = l.body.link_id;
      const svg = '<svg width="220" height="30"><text x="4" y="20" font-family="sans-serif" font-size="16" fill="#37474f">PC1 pings PC2</text></svg>';
      expect((await api("POST", `/v2/projects/${P}/drawings`, { x: -110, y: -160, svg })).status).toBe(201);
    });

    await step("the page lists the project; opening it shows its nodes, link and drawing", async () => {
      await page.goto(`${s.url}/lab`);
      await page.locator("#connection[data-state=connected]").waitFor({ timeout: 30_000 });
      await page.locator("#projects li", { hasText: "Lab page" }).click();
      await expect.poll(() => page.locator("#project-name").textContent()).toBe("Lab page");
      await nodeItem(page, "PC1").waitFor();
      await nodeItem(page, "PC2").waitFor();
      expect(await nodeItem(page, "PC1").getAttribute("data-status")).toBe("STOPPED");
      const g = await graph(page);
      expect(g.nodes.map((n) => n.label).sort()).toEqual(["PC1", "PC2"]);
      expect(g.nodes.every((n) => n.status === "STOPPED" && n.color === "rgb(198,40,40)")).toBe(true);
      expect(g.edges).toEqual([{ id: globalId("Link", L), source: onPage(ids.PC1), target: onPage(ids.PC2) }]);
      expect(g.drawings).toBe(1);
      expect(await page.locator("#links li").innerText()).toBe("PC1 0/0 ↔ PC2 0/0");
    });

    await step("PC1 started from the page turns green, in the list and in the graph", async () => {
      await nodeItem(page, "PC1").click();
      await page.locator("button[data-node=start]").click();
      await page.locator(`#nodes li[data-id="${onPage(ids.PC1)}"][data-status=STARTED]`).waitFor();
      const pc1 = (await graph(page)).nodes.find((n) => n.id === onPage(ids.PC1))!;
      expect(pc1).toMatchObject({ status: "STARTED", color: "rgb(46,157,68)" });
      expect((await api("GET", `/v2/projects/${P}/nodes/${ids.PC1}`)).body.status).toBe("started");
    });

    await step("PC2 started elsewhere (REST) turns green on the page within a second", async () => {
      const r = await api("POST", `/v2/projects/${P}/nodes/${ids.PC2}/start`, {});
      expect(r.status, r.text).toBe(200);
      const started = Date.now(); // the node runs (answered): from here the page has a second
      await page.locator(`#nodes li[data-id="${onPage(ids.PC2)}"][data-status=STARTED]`).waitFor({ timeout: 1000 });
      expect(Date.now() - started).toBeLessThan(1000);
      expect((await graph(page)).nodes.find((n) => n.id === onPage(ids.PC2))!.color).toBe("rgb(46,157,68)");
    });

    await step("PC1's console in the page answers show ip", async () => {
      await nodeItem(page, "PC1").click();
      await page.locator("#open-console").click();
      await expect.poll(() => terminalText(page), { timeout: 10_000 }).toContain("[connected]");
      // The prompt once the startup file ran (what is typed before it goes to the startup's questions).
      await expect.poll(() => terminalText(page), { timeout: 10_000 }).toMatch(/PC1> *$/);
      await page.locator("#terminal").click();
      await page.keyboard.type("show ip");
      await page.keyboard.press("Enter");
      await expect.poll(() => terminalText(page), { timeout: 10_000 }).toMatch(/IP\/MASK\s*:\s*10\.0\.0\.1\/24/);
      // …and xterm.js drew it (on its next animation frame).
      await expect.poll(() => page.locator("#terminal .xterm-rows").innerText()).toMatch(/IP\/MASK\s*:\s*10\.0\.0\.1\/24/);
      expect(await terminalText(page)).toMatch(/NAME\s*:\s*PC1/);
    });

    await step("a ping from that console shows in the link's packets pane", async () => {
      await page.locator("#links li").click();
      await page.locator("#watch-packets").click();
      await waitFor(async () => (await api("GET", `/v2/projects/${P}/links/${L}`)).body.capturing, 10_000, "the capture the page started");
      await page.locator("#terminal").click();
      await page.keyboard.type("ping 10.0.0.2 -c 2");
      await page.keyboard.press("Enter");
      const request = page.locator("#packets tbody tr", { hasText: "ICMP echo request" }).first();
      await request.waitFor({ timeout: 20_000 });
      expect(await request.innerText()).toMatch(/10\.0\.0\.1\s+10\.0\.0\.2\s+ICMP echo request, ttl 64/);
      await page.locator("#packets tbody tr", { hasText: "ICMP echo reply" }).first().waitFor();
      await expect.poll(() => terminalText(page), { timeout: 10_000 }).toMatch(/10\.0\.0\.2 icmp_seq=1 ttl=64/);
      if (process.env.PATCHBAY_LAB_SCREENSHOT) await page.screenshot({ path: process.env.PATCHBAY_LAB_SCREENSHOT });
    });
  }, 120_000);

  it("follows REST changes while it watches: a node renamed and moved, created, deleted; stop all from the page", async () => {
    await step("a rename and a move over REST", async () => {
      const t0 = Date.now();
      const r = await api("PUT", `/v2/projects/${P}/nodes/${ids.PC2}`, { name: "Server", x: 250, y: 120 });
      expect(r.status, r.text).toBe(200);
      await nodeItem(page, "Server").waitFor({ timeout: 1000 });
      expect(Date.now() - t0).toBeLessThan(1000);
      const pc2 = (await graph(page)).nodes.find((n) => n.id === onPage(ids.PC2))!;
      expect(pc2.label).toBe("Server");
      expect(pc2.position).toEqual({ x: 250 + r.body.width / 2, y: 120 + r.body.height / 2 });
      expect(await page.locator("#links li").innerText()).toBe("PC1 0/0 ↔ Server 0/0 ●"); // still capturing (the dot)
    });

    await step("a node created over REST appears, deleted disappears", async () => {
      const r = await api("POST", `/v2/projects/${P}/nodes`, { name: "SW1", node_type: "ethernet_switch", compute_id: "local", x: 0, y: 150 });
      expect(r.status, r.text).toBe(201);
      await nodeItem(page, "SW1").waitFor();
      expect((await graph(page)).nodes.map((n) => n.label).sort()).toEqual(["PC1", "SW1", "Server"]);
      expect((await api("DELETE", `/v2/projects/${P}/nodes/${r.body.node_id}`)).status).toBe(204);
      await nodeItem(page, "SW1").waitFor({ state: "detached" });
      expect((await graph(page)).nodes.map((n) => n.label).sort()).toEqual(["PC1", "Server"]);
    });

    await step("stop all from the page: every node turns red and the console closes", async () => {
      await page.locator("button[data-all=STOP]").click();
      for (const id of [ids.PC1, ids.PC2]) await page.locator(`#nodes li[data-id="${onPage(id)}"][data-status=STOPPED]`).waitFor();
      expect((await graph(page)).nodes.every((n) => n.color === "rgb(198,40,40)")).toBe(true);
      await expect.poll(() => terminalText(page), { timeout: 10_000 }).toContain("[console closed");
      for (const id of [ids.PC1, ids.PC2]) expect((await api("GET", `/v2/projects/${P}/nodes/${id}`)).body.status).toBe("stopped");
    });
  }, 60_000);

  it("shows a volume's quota rules and follows their changes", async () => {
    const svm = await api("POST", "/api/svm/svms?return_records=true&return_timeout=5", { name: "svm1" });
    expect(svm.status, svm.text).toBe(201);
    const volume = await api("POST", "/api/storage/volumes?return_records=true&return_timeout=5", { name: "vol1", "svm.name": "svm1" });
    expect(volume.status, volume.text).toBe(201);
    const volumeUuid = volume.body.records[0].uuid as string;
    for (const name of ["qt1", "qt2"]) expect((await api("POST", "/api/storage/qtrees?return_timeout=5", { svm: { name: "svm1" }, volume: { name: "vol1" }, name })).status).toBe(201);
    const created = await api("POST", "/api/storage/quota/rules?return_records=true&return_timeout=5", {
      svm: { name: "svm1" },
      volume: { name: "vol1" },
      type: "tree",
      qtree: { name: "qt1" },
      space: { hard_limit: 1048576 },
    });
    expect(created.status, created.text).toBe(201);
    await page.reload();
    await page.locator("#connection[data-state=connected]").waitFor({ timeout: 30_000 });
    await page.locator("#volumes").selectOption(volumeUuid);
    const row = (uuid: string) => page.locator(`#rules tr[data-uuid="${uuid}"]`);
    const first = created.body.records[0].uuid;
    await row(first).waitFor();
    expect(await row(first).innerText()).toMatch(/tree\s+qt1\s+1 MiB/);
    // Changes made elsewhere while the page watches.
    const second = await api("POST", "/api/storage/quota/rules?return_records=true&return_timeout=5", {
      svm: { name: "svm1" },
      volume: { name: "vol1" },
      type: "tree",
      qtree: { name: "qt2" },
      files: { hard_limit: 500 },
    });
    expect(second.status, second.text).toBe(201);
    await row(second.body.records[0].uuid).waitFor();
    expect(await row(second.body.records[0].uuid).innerText()).toMatch(/tree\s+qt2\s+—\s+500/);
    expect((await api("PATCH", `/api/storage/quota/rules/${first}?return_timeout=5`, { space: { hard_limit: 2097152 } })).status).toBeLessThan(300);
    await expect.poll(() => row(first).innerText()).toMatch(/2 MiB/);
    expect((await api("DELETE", `/api/storage/quota/rules/${first}?return_timeout=5`)).status).toBeLessThan(300);
    await row(first).waitFor({ state: "detached" });
    expect(foreign).toEqual([]); // everything the page loaded came from the server
  }, 60_000);
});
