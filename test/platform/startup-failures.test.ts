import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VERSION } from "../../src/platform/ops/version.js";
import { postgresReachable } from "../support/databases.js";
import { toolAvailable } from "../support/tools.js";
import { CLI, runCli } from "../support/cli.js";

/**
 * Issue 12: every start-up failure prints one line saying what is wrong and what to do, and exits non-zero
 * within 5 s. The real CLI is spawned with each bad setting.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const dirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-start-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const run = (env: Record<string, string>, args: string[] = []) => runCli({ PATCHBAY_DATA_DIR: tempDir(), ...env }, args, ROOT);

/** One line on stderr, starting with "patchbay: " and matching `what`; a non-zero exit within 5 s. */
function expectOneLine(r: Awaited<ReturnType<typeof run>>, what: RegExp, code = 1) {
  expect(r.stderr.trimEnd().split("\n"), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(/^patchbay: /);
  expect(r.stderr).toMatch(what);
  expect(r.code).toBe(code);
  expect(r.ms).toBeLessThan(5000);
}

const hasPostgres = toolAvailable("PostgreSQL", await postgresReachable(ADMIN_URL));

describe("start-up failures", () => {
  it("--version prints the version", async () => {
    const r = await run({}, ["--version"]);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(r.code).toBe(0);
  });

  it("PostgreSQL not running", async () => {
    const r = await run({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/patchbay" });
    expectOneLine(r, /cannot reach PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\): start PostgreSQL, or set DATABASE_URL/);
  });

  it.skipIf(!hasPostgres)("database missing", async () => {
    const url = new URL(ADMIN_URL);
    url.pathname = "/patchbay_no_such_database";
    const r = await run({ DATABASE_URL: url.toString() });
    expectOneLine(r, /database patchbay_no_such_database does not exist on .*: createdb patchbay_no_such_database, or set DATABASE_URL/);
  });

  it("port in use", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const r = await run({ PORT: String(port), PATCHBAY_LOG: "json" });
      expectOneLine(r, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use: stop the other server or choose another port with PORT`));
      expect(r.stdout, "it fails before migrating (no 'migrated' line)").toBe("");
    } finally {
      taken.close();
    }
  });

  it("an unsupported database URL scheme (mysql://)", async () => {
    const r = await run({ DATABASE_URL: "mysql://root@127.0.0.1/patchbay" });
    expectOneLine(r, /DATABASE_URL must be file:<path> \(SQLite\) or postgres:\/\/… \(PostgreSQL\); mysql: is not supported/, 2);
  });

  it("a Redis namespace that cannot be part of a key", async () => {
    const r = await run({ PATCHBAY_REDIS_NAMESPACE: "prod lab" });
    expectOneLine(r, /PATCHBAY_REDIS_NAMESPACE must be 1-64 letters, digits, _ \. or -/, 2);
  });

  it("a CORS origin that is not an origin (a path after it)", async () => {
    const r = await run({ PATCHBAY_CORS_ORIGINS: "http://localhost:4200,https://gns3.github.io/web-ui" });
    expectOneLine(r, /PATCHBAY_CORS_ORIGINS: https:\/\/gns3\.github\.io\/web-ui is not an origin \(scheme:\/\/host\[:port\]/, 2);
  });

  it("a data directory that cannot be created (under /proc: Node's recursive mkdir used to loop forever)", async () => {
    const r = await run({ PATCHBAY_DATA_DIR: "/proc/patchbay-data" });
    expectOneLine(r, /data directory \/proc\/patchbay-data is not usable \(\w+\): choose a writable directory with PATCHBAY_DATA_DIR/);
  });

  it("a data directory that is a file", async () => {
    const file = path.join(tempDir(), "not-a-dir");
    fs.writeFileSync(file, "");
    const r = await run({ PATCHBAY_DATA_DIR: path.join(file, "data") });
    expectOneLine(r, /data directory .*not-a-dir\/data is not usable \(ENOTDIR\)/);
  });
});

describe("start-up failures of the TLS pair and the port ranges: one line each, before the database is touched", () => {
  /** A self-signed pair made with openssl; each case points the server at some of its files. */
  function pair(dir: string, name: string) {
    const [cert, key] = [path.join(dir, `${name}-cert.pem`), path.join(dir, `${name}-key.pem`)];
    const made = spawnSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", key, "-out", cert]);
    expect(made.status, String(made.stderr)).toBe(0);
    return { cert, key };
  }
  const hasOpenssl = toolAvailable("openssl", spawnSync("openssl", ["version"]).status === 0);

  it.runIf(hasOpenssl)("a missing, swapped or foreign certificate or key", async () => {
    const files = tempDir();
    const [a, b] = [pair(files, "a"), pair(files, "b")];
    const cases: [Record<string, string>, RegExp][] = [
      [{ PATCHBAY_TLS_CERT: path.join(files, "missing.pem"), PATCHBAY_TLS_KEY: a.key }, /cannot read PATCHBAY_TLS_CERT .*missing\.pem \(ENOENT\): fix the path/],
      [{ PATCHBAY_TLS_CERT: a.cert, PATCHBAY_TLS_KEY: path.join(files, "missing.pem") }, /cannot read PATCHBAY_TLS_KEY .*missing\.pem \(ENOENT\)/],
      [{ PATCHBAY_TLS_CERT: a.key, PATCHBAY_TLS_KEY: a.cert }, /PATCHBAY_TLS_CERT .*a-key\.pem holds no PEM certificate \(are the certificate and key swapped\?\)/],
      [{ PATCHBAY_TLS_CERT: a.cert, PATCHBAY_TLS_KEY: a.cert }, /PATCHBAY_TLS_KEY .*a-cert\.pem holds no unencrypted PEM private key/],
      [{ PATCHBAY_TLS_CERT: a.cert, PATCHBAY_TLS_KEY: b.key }, /PATCHBAY_TLS_KEY .*b-key\.pem is not the key of the certificate in PATCHBAY_TLS_CERT .*a-cert\.pem/],
    ];
    for (const [env, line] of cases) {
      const data = tempDir();
      const r = await runCli({ PATCHBAY_DATA_DIR: data, PATCHBAY_LOG: "json", ...env }, [], ROOT);
      expectOneLine(r, line);
      expect(r.stdout, "nothing logged: no migration ran").toBe("");
      expect(fs.readdirSync(data), "no database created").toEqual([]);
    }
  });

  it("overlapping console and UDP port ranges", async () => {
    const r = await run({ PATCHBAY_CONSOLE_PORTS: "5000-10000", PATCHBAY_UDP_PORTS: "10000-20000" });
    expectOneLine(r, /PATCHBAY_CONSOLE_PORTS 5000-10000 and PATCHBAY_UDP_PORTS 10000-20000 overlap: give them separate ranges/, 2);
    const inside = await run({}, ["--console-ports", "12000-12100"]); // inside the default UDP range
    expectOneLine(inside, /PATCHBAY_CONSOLE_PORTS 12000-12100 and PATCHBAY_UDP_PORTS 10000-20000 overlap/, 2);
  });
});

describe("start-up banner", () => {
  it("a compute does not advertise GraphiQL (it answers 403 there) and its start page links only what it serves", async () => {
    const child = spawn(process.execPath, CLI, {
      cwd: ROOT,
      env: { ...process.env, HOST: "127.0.0.1", PORT: "0", PATCHBAY_DATA_DIR: tempDir(), DATABASE_URL: "", REDIS_URL: "", PATCHBAY_LOG: "off", PATCHBAY_MODE: "compute" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      const banner = await new Promise<string>((resolve, reject) => {
        let err = "";
        child.stderr.on("data", (d) => {
          err += d;
          if (err.includes("\n")) resolve(err.trim());
        });
        child.once("exit", () => reject(new Error(`exited: ${err}`)));
      });
      expect(banner).toMatch(/^Patchbay on http:\/\/127\.0\.0\.1:\d+ {2}\(.*compute mode/);
      expect(banner).not.toMatch(/graphql/i);
      const url = /^Patchbay on (\S+)/.exec(banner)![1];
      expect((await fetch(`${url}/graphql`)).status).toBe(403);
      const page = await (await fetch(`${url}/`)).text();
      expect(page).toContain("compute mode");
      expect(page).not.toContain('href="/graphql"');
      expect(page).toContain('href="/health"');
    } finally {
      child.kill("SIGTERM");
    }
  });
});
