import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { CLI } from "../support/cli.js";

describe("platform: serving", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());

  it("serves GraphiQL with its assets inlined (no CDN, works offline)", async () => {
    const res = await fetch(`${s.url}/graphql`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("GraphiQL");
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//);
    expect(html).not.toMatch(/unpkg\.com|cdn\.jsdelivr/);
  });

  it("answers GraphQL over HTTP", async () => {
    const r = await gql(s.url, "{ storageVersion }");
    expect(r.data.storageVersion).toMatch(/^NetApp Release 9\./);
  });

  it("answers unknown routes with a 404", async () => {
    expect((await call(s.url, "GET", "/nope")).status).toBe(404);
  });

  it("keeps an idle keep-alive socket past Node's 5 s default (75 s, as gns3-server), so a pooled socket is not reset", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; keepAlive: string; socket: unknown }>((resolve, reject) => {
        http.get(`${s.url}/v2/version`, { agent }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode!, keepAlive: String(res.headers["keep-alive"]), socket: res.socket }));
        }).on("error", reject);
      });
    const first = await get();
    expect(first.keepAlive).toBe("timeout=75");
    await new Promise((r) => setTimeout(r, 6000));
    const second = await get();
    expect(second.status).toBe(200);
    expect(second.socket).toBe(first.socket); // the same connection, still open after 6 s idle
    agent.destroy();
  }, 15_000);
});

describe("platform: HTTP Basic auth", () => {
  let s: TestServer;
  const good = { authorization: `Basic ${Buffer.from("admin:s3cret").toString("base64")}` };
  const bad = { authorization: `Basic ${Buffer.from("admin:wrong").toString("base64")}` };
  beforeAll(async () => void (s = await startTestServer({ auth: { user: "admin", password: "s3cret" } })));
  afterAll(() => s.close());

  it("refuses REST, GraphQL and SSE without credentials, with WWW-Authenticate: Basic", async () => {
    for (const [method, url] of [["GET", "/api/cluster"], ["GET", "/v2/version"], ["POST", "/graphql"], ["GET", "/graphql?query=subscription%7B__typename%7D"]]) {
      for (const headers of [{}, bad]) {
        const r = await call(s.url, method, url, method === "POST" ? { query: "{ storageVersion }" } : undefined, headers);
        expect(r.status, `${method} ${url}`).toBe(401);
        expect(r.headers.get("www-authenticate")).toMatch(/^Basic /);
      }
    }
    const r = await call(s.url, "GET", "/api/cluster");
    expect(r.body).toEqual({ error: { message: "not authorized for that command", code: "6" } });
  });

  it("accepts the right credentials", async () => {
    const r = await gql(s.url, "{ storageVersion }", undefined, good);
    expect(r.data.storageVersion).toBeTruthy();
  });

  it("refuses graphql-ws upgrades without credentials and accepts them with", async () => {
    const url = s.url.replace("http", "ws") + "/graphql";
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, "graphql-transport-ws");
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => resolve(101));
    });
    expect(refused).toBe(401);
    const accepted = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, "graphql-transport-ws", { headers: good });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => {
        ws.close();
        resolve(101);
      });
    });
    expect(accepted).toBe(101);
  });
});

describe("platform: TLS", () => {
  let s: TestServer;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-tls-"));
  beforeAll(async () => {
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
      "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")], { stdio: "ignore" });
    s = await startTestServer({ tls: { certFile: path.join(dir, "cert.pem"), keyFile: path.join(dir, "key.pem") } });
  });
  afterAll(() => s.close());

  it("serves HTTPS with the given PEM pair", async () => {
    expect(s.url).toMatch(/^https:/);
    const status = await new Promise<number>((resolve, reject) =>
      https
        .get(`${s.url}/graphql?query=%7BstorageVersion%7D`, { rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on("error", reject),
    );
    expect(status).toBe(200);
  });
});

describe("platform: command line", () => {
  // As `npm start` runs it: the built server in one node process, so signals reach the server itself.
  const cli = CLI;

  it("documents every setting in --help", () => {
    const out = execFileSync(process.execPath, [...cli, "--help"], { encoding: "utf8" });
    for (const v of ["HOST", "PORT", "DATABASE_URL", "REDIS_URL", "PATCHBAY_DATA_DIR", "PATCHBAY_AUTH_USER", "PATCHBAY_TLS_CERT"]) {
      expect(out).toContain(v);
    }
  });

  it("rejects an unknown flag with exit status 2", () => {
    expect(() => execFileSync(process.execPath, [...cli, "--nope"], { stdio: "pipe" })).toThrow(/status 2|Unknown option/);
  });

  it("migrates a fresh database, logs one JSON line per request and stops cleanly on SIGTERM", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-cli-"));
    const child = spawn(process.execPath, [...cli, "--port", "0", "--data-dir", dataDir], { env: { ...process.env, DATABASE_URL: "" } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (d) => {
        const m = /Patchbay on (\S+)/.exec(String(d));
        if (m) resolve(m[1]);
      });
      child.once("exit", () => reject(new Error("exited early: " + out)));
    });
    expect((await fetch(`${url}/graphql?query=%7BstorageVersion%7D`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const lines = out.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.find((l) => l.msg === "migrated")).toBeTruthy();
    expect(lines.find((l) => l.msg === "request" && l.status === 200 && l.method === "GET")).toBeTruthy();
    expect(fs.existsSync(path.join(dataDir, "patchbay.db"))).toBe(true);
  });
});
