import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, startServer } from "../support/bundle.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 23 point 3: a GNS3 Web UI build the user has (PATCHBAY_WEB_UI_DIR), served as gns3-server serves its bundle
 * (compat "Serving the UI"), with a small fake bundle made here: index.html, a hashed script, a stylesheet, an
 * asset — and, around it, what must never be served: a secret beside the bundle, links leading out of it.
 */
const AUTH = { user: "admin", password: "s3cret" };
const CREDENTIALS = { authorization: `Basic ${Buffer.from(`${AUTH.user}:${AUTH.password}`).toString("base64")}` };
const SECRET = "TOP-SECRET-OUTSIDE-THE-BUNDLE";
const INDEX = "<!doctype html><html><head><title>GNS3 Web UI</title></head><body><app-root></app-root></body></html>\n";
const MAIN = "main.0123456789abcdef.js";
const SCRIPT = "console.log('web ui');\n";

function makeBundle() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-webui-"));
  const dir = path.join(base, "web-ui");
  fs.mkdirSync(path.join(dir, "assets"), { recursive: true });
  fs.writeFileSync(path.join(dir, "index.html"), INDEX);
  fs.writeFileSync(path.join(dir, MAIN), SCRIPT);
  fs.writeFileSync(path.join(dir, "styles.css"), "body{margin:0}\n");
  fs.writeFileSync(path.join(dir, "assets", "logo.svg"), '<svg xmlns="http://www.w3.org/2000/svg"/>\n');
  fs.writeFileSync(path.join(dir, ".env"), SECRET);
  fs.writeFileSync(path.join(dir, "assets", ".hidden"), SECRET);
  // Beside the bundle: a file, and a directory, that links inside the bundle point at.
  fs.writeFileSync(path.join(base, "secret.txt"), SECRET);
  fs.mkdirSync(path.join(base, "private"));
  fs.writeFileSync(path.join(base, "private", "key.txt"), SECRET);
  fs.symlinkSync(path.join(base, "secret.txt"), path.join(dir, "outside.txt"));
  fs.symlinkSync(path.join(base, "private"), path.join(dir, "linked"));
  fs.symlinkSync("/etc/passwd", path.join(dir, "passwd"));
  fs.symlinkSync(MAIN, path.join(dir, "alias.js")); // a link inside the bundle is fine
  return { base, dir };
}

/** A GET sent exactly as written (fetch would resolve dot segments and encode backslashes before sending). */
function rawGet(s: TestServer, rawPath: string, headers: Record<string, string> = CREDENTIALS) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    http
      .get(`${s.url}/`, { path: rawPath, headers }, (res) => {
        let body = "";
        res.setEncoding("latin1");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
      .on("error", reject);
  });
}

describe("Web UI served from PATCHBAY_WEB_UI_DIR", () => {
  let s: TestServer;
  let bundle: ReturnType<typeof makeBundle>;
  beforeAll(async () => {
    bundle = makeBundle();
    s = await startTestServer({ webUiDir: bundle.dir, auth: AUTH });
  });
  afterAll(async () => {
    await s?.close();
    fs.rmSync(bundle.base, { recursive: true, force: true });
  });

  it("redirects / to /static/web-ui/bundled (302), and keeps the start page at /start with a link to the UI", async () => {
    const root = await rawGet(s, "/");
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe("/static/web-ui/bundled");
    const start = await rawGet(s, "/start");
    expect(start.status).toBe(200);
    expect(start.body).toContain('<a href="/static/web-ui/bundled">GNS3 Web UI</a>');
  });

  it("answers index.html for bundled and every name that is not a file (deep links, directories), never cached unchecked", async () => {
    for (const name of ["bundled", "servers", "server/1/project/8f2a0c1e-0000-4000-8000-000000000000", "assets", "assets/", "no-such.js"]) {
      const r = await rawGet(s, `/static/web-ui/${name}`);
      expect(r.status, name).toBe(200);
      expect(r.body, name).toBe(INDEX);
      expect(r.headers["content-type"], name).toBe("text/html; charset=utf-8");
      expect(r.headers["cache-control"], name).toBe("no-cache");
    }
  });

  it("serves the files with their types: scripts as application/javascript, hashed names immutable, the rest revalidated", async () => {
    const main = await rawGet(s, `/static/web-ui/${MAIN}`);
    expect(main).toMatchObject({ status: 200, body: SCRIPT });
    expect(main.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(main.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(main.headers["x-content-type-options"]).toBe("nosniff");
    const css = await rawGet(s, "/static/web-ui/styles.css");
    expect(css.headers["content-type"]).toMatch(/^text\/css/);
    expect(css.headers["cache-control"]).toBe("no-cache");
    const svg = await rawGet(s, "/static/web-ui/assets/logo.svg");
    expect(svg.headers["content-type"]).toBe("image/svg+xml");
    expect((await rawGet(s, "/static/web-ui/alias.js")).body).toBe(SCRIPT); // a link that stays inside the bundle

    // Revalidation answers 304; HEAD answers the headers alone.
    const again = await rawGet(s, "/static/web-ui/styles.css", { ...CREDENTIALS, "if-none-match": String(css.headers.etag) });
    expect(again.status).toBe(304);
    const head = await fetch(`${s.url}/static/web-ui/${MAIN}`, { method: "HEAD", headers: CREDENTIALS });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(SCRIPT.length));
    expect((await fetch(`${s.url}/static/web-ui/${MAIN}`, { method: "POST", headers: CREDENTIALS })).status).toBe(405);
  });

  it("answers the empty name 404, as gns3-server", async () => {
    expect((await rawGet(s, "/static/web-ui/")).status).toBe(404);
    expect((await rawGet(s, "/static/web-ui")).status).toBe(404);
  });

  it("refuses dot segments, backslashes and control characters, plain or percent-encoded (403)", async () => {
    const names = [
      ".env", "assets/.hidden", "%2eenv", "assets/%2Ehidden",
      "../secret.txt", "..%2fsecret.txt", "%2e%2e/secret.txt", "%2e%2e%2fsecret.txt", "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
      "assets/../../secret.txt", "assets/%2e%2e/%2e%2e/secret.txt", "./index.html", "bundled/./x",
      "..%5csecret.txt", "assets%5c..%5c..%5csecret.txt", "%5c%5cserver%5cshare", "index.html%00.js", "a%0ab",
    ];
    for (const name of names) {
      const r = await rawGet(s, `/static/web-ui/${name}`);
      expect(r.status, name).toBe(403);
      expect(r.body, name).not.toContain(SECRET);
    }
    expect((await rawGet(s, "/static/web-ui/%E0%A4%A")).status).toBe(400); // not a percent-encoding
  });

  it("never follows a link out of the bundle (403), to a file or through a directory", async () => {
    for (const name of ["outside.txt", "linked/key.txt", "passwd", "linked", "linked/"]) {
      const r = await rawGet(s, `/static/web-ui/${name}`);
      expect(r.status, name).toBe(403);
      expect(r.body, name).not.toContain(SECRET);
      expect(r.body, name).not.toContain("root:");
    }
  });

  it("is behind the server's authentication like every route", async () => {
    expect((await rawGet(s, "/static/web-ui/bundled", {})).status).toBe(401);
    expect((await rawGet(s, `/static/web-ui/${MAIN}`, {})).status).toBe(401);
  });
});

describe("Web UI setting off or unusable", () => {
  it("is read from PATCHBAY_WEB_UI_DIR or --web-ui-dir (the flag wins), as an absolute path", () => {
    expect(loadConfig([], {}).webUiDir).toBeUndefined();
    expect(loadConfig([], { PATCHBAY_WEB_UI_DIR: "ui" }).webUiDir).toBe(path.resolve("ui"));
    expect(loadConfig(["--web-ui-dir", "/srv/web-ui"], { PATCHBAY_WEB_UI_DIR: "ui" }).webUiDir).toBe("/srv/web-ui");
  });

  it("without PATCHBAY_WEB_UI_DIR: /static/web-ui/… answers 404 and / is the start page without a UI link", async () => {
    const s = await startTestServer();
    try {
      for (const name of ["bundled", "index.html", ""]) expect((await rawGet(s, `/static/web-ui/${name}`, {})).status, name).toBe(404);
      const root = await rawGet(s, "/", {});
      expect(root.status).toBe(200);
      expect(root.body).toContain("<h1>Patchbay</h1>");
      expect(root.body).not.toContain("web-ui");
      expect((await rawGet(s, "/start", {})).body).toBe(root.body);
    } finally {
      await s.close();
    }
  });

  it("refuses to start with a directory that is missing or holds no index.html, in one line, before anything else", async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-webui-empty-"));
    // Checked first: no data directory, database or port is touched (the data directory given does not exist).
    const start = (webUiDir: string) => startServer({ ...loadConfig([], {}), port: 0, dataDir: path.join(empty, "data"), webUiDir });
    try {
      await expect(start(path.join(empty, "nope"))).rejects.toThrow(/^PATCHBAY_WEB_UI_DIR .*nope cannot be read \(ENOENT\)/);
      await expect(start(empty)).rejects.toThrow(/^PATCHBAY_WEB_UI_DIR .* holds no index\.html/);
      expect(fs.existsSync(path.join(empty, "data"))).toBe(false);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
