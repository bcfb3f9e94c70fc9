import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { createDb } from "../../src/platform/db/client.js";
import { call, freshDatabaseUrl, gql } from "../support/server.js";
import { CLI } from "../support/cli.js";

/**
 * Issue 10 item 7: every request has an id (the caller's X-Request-Id when short and well formed), echoed in the
 * response header on both REST faces and GraphQL, on the request-log line and on the log line of an internal
 * error. The real CLI runs as a child process, so the test reads the very lines an operator sees (stdout: info,
 * stderr: errors). Internal errors are provoked from outside: a table the server needs is renamed in its database.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Line = Record<string, any>;

describe("platform: request ids in headers and log lines", () => {
  let child: ChildProcess;
  let url = "";
  let databaseUrl = "";
  let dropDatabase = async () => {};
  const stdout: string[] = [];
  const stderr: string[] = [];
  const jsonLines = (chunks: string[]): Line[] =>
    chunks
      .join("")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
  /** Waits for the line (stdout or stderr) that carries request `id` and matches `where`. */
  const lineOf = (chunks: string[], id: string, where: Partial<Line>) =>
    vi.waitFor(
      () => {
        const line = jsonLines(chunks).find((l) => l.id === id && Object.entries(where).every(([k, v]) => l[k] === v));
        if (!line) throw new Error(`no log line with id ${id} and ${JSON.stringify(where)}`);
        return line;
      },
      { timeout: 10_000, interval: 20 },
    );

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-reqid-"));
    const db = await freshDatabaseUrl(dataDir);
    databaseUrl = db.url;
    dropDatabase = db.drop;
    child = spawn(process.execPath, [...CLI, "--port", "0", "--data-dir", dataDir], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, PATCHBAY_LOG: "json", REDIS_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (d) => stdout.push(String(d)));
    child.stderr!.on("data", (d) => stderr.push(String(d)));
    url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on("data", () => {
        const m = /Patchbay on (\S+)/.exec(stderr.join(""));
        if (m) resolve(m[1]);
      });
      child.once("exit", () => reject(new Error(`exited early: ${stderr.join("")}`)));
    });
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    await dropDatabase();
  });

  it("keeps a well-formed X-Request-Id: echoed on the GNS3 answer and on its request-log line", async () => {
    const r = await call(url, "GET", "/v2/version", undefined, { "X-Request-Id": "trace-0001" });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-request-id")).toBe("trace-0001");
    const line = await lineOf(stdout, "trace-0001", { msg: "request" });
    expect(line).toMatchObject({ level: "info", method: "GET", path: "/v2/version", status: 200, ms: expect.any(Number) });
  });

  it("gives each request of each face its own id, replacing a malformed or long one", async () => {
    const answers = [
      await call(url, "GET", "/api/storage/volumes"),
      await call(url, "GET", "/v2/projects", undefined, { "X-Request-Id": "has spaces" }),
      await call(url, "GET", "/v2/computes", undefined, { "X-Request-Id": "x".repeat(65) }),
      await call(url, "GET", "/graphql?query=%7BstorageVersion%7D"),
      await call(url, "POST", "/graphql", { query: "{ emulationVersion }" }),
    ];
    const ids = answers.map((a) => a.headers.get("x-request-id") ?? "");
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    await lineOf(stdout, ids[0], { msg: "request", path: "/api/storage/volumes", status: 200 });
    await lineOf(stdout, ids[4], { msg: "request", method: "POST", path: "/graphql", status: 200 });
  });

  it("logs an internal error of each face on stderr with the request's id, and the server keeps serving", async () => {
    const db = await createDb(databaseUrl);
    try {
      await db.$executeRawUnsafe(`ALTER TABLE "Project" RENAME TO "ProjectGone"`);
      await db.$executeRawUnsafe(`ALTER TABLE "Qtree" RENAME TO "QtreeGone"`);
    } finally {
      await db.$disconnect();
    }

    const gns3 = await call(url, "GET", "/v2/projects", undefined, { "X-Request-Id": "broken-gns3" });
    expect(gns3.status).toBe(500);
    expect(gns3.body).toEqual({ message: "Internal server error", status: 500 });
    expect(gns3.headers.get("x-request-id")).toBe("broken-gns3");

    const ontap = await call(url, "GET", "/api/storage/qtrees", undefined, { "X-Request-Id": "broken-ontap" });
    expect(ontap.status).toBe(500);
    expect(ontap.body.error.code).toBe("1");
    expect(ontap.headers.get("x-request-id")).toBe("broken-ontap");

    const graphql = await gql(url, "{ projects { totalCount } }", undefined, { "X-Request-Id": "broken-graphql" });
    expect(graphql.errors?.[0].message).toBe("Unexpected error.");

    for (const [id, msg] of [["broken-gns3", "unexpected error"], ["broken-ontap", "unexpected error"], ["broken-graphql", "graphql"]]) {
      const line = await lineOf(stderr, id, { msg });
      expect(line.level).toBe("error");
      expect(line.error.stack, id).toMatch(/Gone|does not exist|no such table/i);
    }
    // A WebSocket upgrade has its id too: its failure is logged with it and the path it was for, and its outcome is
    // a request line (issue 23), refused or accepted, with a second line when an opened socket closes.
    const wsPath = "/v2/projects/00000000-0000-4000-8000-000000000000/notifications/ws";
    const upgrade = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(url.replace(/^http/, "ws") + wsPath, { headers: { "X-Request-Id": "broken-ws" } });
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => reject(new Error("upgraded although the project table is gone")));
      ws.once("error", reject);
    });
    expect(upgrade).toBe(500);
    expect(await lineOf(stderr, "broken-ws", { msg: "websocket upgrade failed" })).toMatchObject({ level: "error", path: wsPath });
    expect(await lineOf(stdout, "broken-ws", { msg: "request" })).toMatchObject({ method: "GET", path: wsPath, status: 500, websocket: true });
    const opened = new WebSocket(url.replace(/^http/, "ws") + "/v2/notifications/ws", { headers: { "X-Request-Id": "ws-accepted" } });
    await new Promise((resolve, reject) => opened.once("open", resolve).once("error", reject));
    opened.close();
    expect(await lineOf(stdout, "ws-accepted", { msg: "request" })).toMatchObject({ path: "/v2/notifications/ws", status: 101, websocket: true });
    expect(await lineOf(stdout, "ws-accepted", { msg: "websocket closed" })).toMatchObject({ path: "/v2/notifications/ws", code: 1005 });

    expect(await lineOf(stdout, "broken-gns3", { msg: "request" })).toMatchObject({ status: 500, path: "/v2/projects" });
    // Everything the server wrote to stderr but its start-up banner is a JSON log line (no console.error dumps).
    const stray = stderr.join("").split("\n").filter((l) => l && !l.startsWith("{") && !l.startsWith("Patchbay on "));
    expect(stray).toEqual([]);
    expect((await call(url, "GET", "/v2/version")).status).toBe(200);
  });
});
