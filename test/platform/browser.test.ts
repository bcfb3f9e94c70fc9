import { execFile } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../../src/platform/ops/version.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

/**
 * Issue 12: the landing page and the API reference load in a real headless browser (Debian's chromium) and show
 * what they should — the reference is rendered by Swagger UI's script from the served assets and documents.
 */
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));
const hasChromium = toolAvailable("chromium", CHROMIUM !== undefined);

/** The DOM after the page's scripts ran (virtual time lets fetches and rendering settle). */
function dumpDom(url: string): Promise<string> {
  const args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--virtual-time-budget=10000", "--dump-dom", url];
  return new Promise((resolve, reject) =>
    execFile(CHROMIUM!, args, { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
}

describe.skipIf(!hasChromium)("pages in a headless browser (requires chromium)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("shows the landing page with the version and its links", async () => {
    const dom = await dumpDom(`${s.url}/`);
    expect(dom).toContain(`<strong id="version">${VERSION}</strong>`);
    for (const href of ["/graphql", "/docs/api", "/openapi/gns3.json", "/openapi/ontap.json", "/health", "/metrics"]) expect(dom).toContain(`href="${href}"`);
  });

  it("renders the API reference of both faces", async () => {
    const dom = await dumpDom(`${s.url}/docs/api`);
    expect(dom).toContain('id="swagger-ui"');
    expect(dom).toMatch(/<option value="\/openapi\/gns3\.json">Patchbay GNS3 v2 API \(\/v2\)/);
    expect(dom).toMatch(/<option value="\/openapi\/ontap\.json">Patchbay ONTAP REST API \(\/api\)/);
    expect(dom).toContain('data-tag="storage/quota/rules"'); // the first document's operations, rendered
    const gns3 = await dumpDom(`${s.url}/docs/api?urls.primaryName=${encodeURIComponent("Patchbay GNS3 v2 API (/v2)")}`);
    for (const tag of ["compute", "computes", "projects", "templates", "version"]) expect(gns3).toContain(`data-tag="${tag}"`);
  });
});
