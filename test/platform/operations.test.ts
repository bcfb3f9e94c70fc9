import SwaggerParser from "@apidevtools/swagger-parser";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeTcpPort } from "../../src/emulation/runtime/vpcs.js";
import { createDb } from "../../src/platform/db/client.js";
import { openApiPath } from "../../src/platform/http/openapi.js";
import { VERSION } from "../../src/platform/ops/version.js";
import { CLI, runProcess } from "../support/cli.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 12, run like infrastructure: the landing page, health and readiness, Prometheus metrics, the OpenAPI
 * documents (valid, and listing every route the server serves), the API reference page, GraphQL errors a person
 * can act on.
 */
describe("operations endpoints", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ auth: { user: "admin", password: "secret" } });
  });
  afterAll(async () => {
    await s?.close();
  });
  const auth = { authorization: `Basic ${Buffer.from("admin:secret").toString("base64")}` };
  const get = (url: string, headers: Record<string, string> = auth) => call(s.url, "GET", url, undefined, headers);

  it("serves a plain landing page at / with the version and the links", async () => {
    expect((await get("/", {})).status).toBe(401); // like every page, behind the credentials when they are set
    const r = await get("/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.text).toContain(`<strong id="version">${VERSION}</strong>`);
    for (const href of ["/graphql", "/docs/api", "/openapi/gns3.json", "/openapi/ontap.json", "/health", "/health/ready", "/metrics"]) {
      expect(r.text).toContain(`href="${href}"`);
    }
    expect(r.text).not.toMatch(/<script|https?:\/\//); // nothing to load: works offline
  });

  it("answers liveness and readiness without credentials, as JSON", async () => {
    const live = await get("/health", {});
    expect(live).toMatchObject({ status: 200, body: { status: "ok" } });
    const ready = await get("/health/ready", {});
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", redis: "not configured", dataDir: "ok" } });
  });

  it("reports Prometheus metrics: requests per route template, database, bus, streams, nodes, process", async () => {
    const project = await call(s.url, "POST", "/v2/projects", { name: "metrics" }, auth);
    expect(project.status).toBe(201);
    const P = `/v2/projects/${project.body.project_id}`;
    // A switch linked to a hub: both run in-process once the link is wired.
    const ends = [];
    for (const [name, node_type] of [["SW1", "ethernet_switch"], ["HUB1", "ethernet_hub"]]) {
      const node = await call(s.url, "POST", `${P}/nodes`, { name, node_type, compute_id: "local" }, auth);
      expect(node.status).toBe(201);
      ends.push({ node_id: node.body.node_id, adapter_number: 0, port_number: 0 });
    }
    expect((await call(s.url, "POST", `${P}/links`, { nodes: ends }, auth)).status).toBe(201);
    const notifications = (await fetch(`${s.url}${P}/notifications`, { headers: auth })).body!.getReader();
    await notifications.read(); // the stream is open (its first ping)
    await get(`/v2/projects/${project.body.project_id}/nodes`);
    await get("/api/storage/volumes");
    await get("/nowhere");
    const sub = await fetch(`${s.url}/graphql?query=${encodeURIComponent("subscription { controllerEvents { __typename } }")}`, {
      headers: { ...auth, accept: "text/event-stream" },
    });
    const reader = sub.body!.getReader();
    await reader.read(); // the stream is open
    expect((await get("/metrics", {})).status).toBe(401);
    const r = await get("/metrics");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = r.text;
    expect(m).toMatch(/patchbay_http_request_duration_seconds_count\{method="GET",route="\/v2\/projects\/:project_id\/nodes",status="200"\} 1/);
    expect(m).toMatch(/patchbay_http_request_duration_seconds_count\{method="POST",route="\/v2\/projects",status="201"\} 1/);
    expect(m).toMatch(/patchbay_http_request_duration_seconds_count\{method="GET",route="\/api\/storage\/volumes",status="200"\} 1/);
    expect(m).toMatch(/patchbay_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1/);
    expect(m).toMatch(/patchbay_http_request_duration_seconds_count\{method="GET",route="unmatched",status="401"\} [1-9]/); // refused before routing
    expect(m).toMatch(/patchbay_db_query_duration_seconds_count\{model="Project",operation="create"\} [1-9]/);
    expect(m).toMatch(/patchbay_event_bus_published_total\{channel="emulation:controller"\} [1-9]/);
    expect(m).toMatch(/patchbay_event_bus_delivered_total\{channel="emulation:[a-z]+"\} [1-9]/);
    expect(m).toMatch(/patchbay_open_streams\{kind="graphql:controllerEvents"\} 1/);
    expect(m).toMatch(/patchbay_event_bus_subscribers [1-9]/);
    expect(m).toMatch(/patchbay_open_streams\{kind="gns3:project"\} 1/);
    // They run once the runtime has wired the link (it follows the events): wait for it rather than for a time.
    const running = [/^patchbay_running_nodes\{type="ethernet_switch"\} 1$/m, /^patchbay_running_nodes\{type="ethernet_hub"\} 1$/m];
    await waitFor(async () => ((text) => running.every((r) => r.test(text)))((await get("/metrics")).text), 10_000, "the switch and the hub counted as running");
    expect(m).toMatch(/^process_cpu_user_seconds_total /m);
    expect(m).toMatch(/^nodejs_eventloop_lag_seconds /m);
    await reader.cancel();
    await notifications.cancel();
  });

  it("labels requests by route template only: other spellings of a path are 404s and add no label value", async () => {
    const routes = async () => new Set([...(await get("/metrics")).text.matchAll(/^patchbay_http_request_duration_seconds_count\{[^}]*route="([^"]*)"/gm)].map((m) => m[1]));
    const known = ["/api/cluster", "/api/nowhere", "/graphql?query=%7B__typename%7D", "/v2/version", "/docs/api/assets/none.js", "/nowhere", "/metrics"];
    for (const p of known) await get(p);
    const before = await routes();
    const spellings = ["/API/cluster", "/Api/Cluster", "/api/CLUSTER", "/GraphQL?query=%7B__typename%7D", "/GRAPHQL", "/Graphql/", "/V2/version",
      "/v2/VERSION", "/v2//version", "/METRICS", "/Docs/api/assets/none.js", "/docs/API/assets/x", "//api/cluster", "/api/cluster/", "/%61pi/cluster"];
    const answers = [];
    for (const p of spellings) answers.push((await get(p)).status);
    expect(answers.filter((status) => status !== 404)).toEqual([200]); // only `/api/cluster/` (a trailing slash) is that route
    expect([...(await routes())].filter((r) => !before.has(r))).toEqual([]);
  });

  it("publishes OpenAPI 3.1 documents that validate and list every route the server serves", async () => {
    const served = s.routes();
    for (const [face, prefix] of [["gns3", "/v2"], ["ontap", "/api"]] as const) {
      const r = await get(`/openapi/${face}.json`);
      expect(r.status).toBe(200);
      const doc = r.body;
      expect(doc.openapi).toBe("3.1.0");
      expect(doc.info.version).toBe(VERSION);
      await SwaggerParser.validate(structuredClone(doc)); // throws with the reason when the document is invalid
      const routes = served.filter((e) => e.path.startsWith(`${prefix}/`));
      expect(routes.length).toBeGreaterThan(face === "gns3" ? 100 : 15);
      for (const route of routes) {
        expect(doc.paths[openApiPath(route.path).path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
      }
    }
    const gns3 = (await get("/openapi/gns3.json")).body;
    // Bodies are the schemas the routes validate with: node creation requires what the route requires.
    const createNode = gns3.paths["/v2/projects/{project_id}/nodes"].post.requestBody.content["application/json"].schema;
    expect(createNode.required).toEqual(expect.arrayContaining(["name", "node_type", "compute_id"]));
    expect(createNode.additionalProperties).toBe(false);
    const ontap = (await get("/openapi/ontap.json")).body;
    for (const [path, methods] of Object.entries(ontap.paths) as [string, Record<string, { requestBody?: unknown }>][]) {
      for (const method of ["post", "patch"]) if (methods[method]) expect(methods[method].requestBody, `${method} ${path}`).toBeDefined();
    }
    const rule = ontap.paths["/api/storage/quota/rules"].post.requestBody.content["application/json"].schema;
    expect(Object.keys(rule.properties)).toEqual(expect.arrayContaining(["svm", "volume", "type", "users", "space", "files"]));
  });

  it("serves the API reference page and its assets from the package, no CDN", async () => {
    const page = await get("/docs/api");
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const asset of page.text.match(/\/docs\/api\/[\w./-]+\.(js|css|png)/g)!) {
      const r = await fetch(s.url + asset, { headers: auth });
      expect(r.status, asset).toBe(200);
    }
    expect((await get("/docs/api/init.js")).text).toContain("/openapi/ontap.json");
  });

  it("keeps GraphQL mistakes' messages and says what to send when a document holds several operations", async () => {
    const several = await gql(s.url, "query A { projects { totalCount } } query B { computes { totalCount } }", undefined, auth);
    expect(several.errors?.[0].message).toBe("The document has 2 operations (A, B): send one operation, or choose one with operationName.");
    const anonymous = await gql(s.url, "{ projects { totalCount } } { computes { totalCount } }", undefined, auth);
    expect(anonymous.errors?.[0].message).toMatch(/2 operations .*name each operation/);
    const syntax = await gql(s.url, "query {", undefined, auth);
    expect(syntax.errors?.[0].message).toMatch(/^Syntax Error: Expected Name, found <EOF>/);
    const validation = await gql(s.url, "{ projects { noSuchField } }", undefined, auth);
    expect(validation.errors?.[0].message).toMatch(/Cannot query field "noSuchField"/);
  });
});

describe("operations endpoints when something is wrong", () => {
  it("reports a failing readiness check with 503, and masks an internal GraphQL error with the request id", async () => {
    const s = await startTestServer();
    try {
      const db = await createDb(s.databaseUrl);
      await db.$executeRawUnsafe(`DELETE FROM "_prisma_migrations" WHERE migration_name = (SELECT MAX(migration_name) FROM "_prisma_migrations")`);
      await db.$executeRawUnsafe(`ALTER TABLE "Project" RENAME TO "ProjectGone"`);
      await db.$disconnect();
      const ready = await call(s.url, "GET", "/health/ready");
      expect(ready.status).toBe(503);
      expect(ready.body.status).toBe("not ready");
      expect(ready.body.checks).toMatchObject({ database: "ok", migrations: "failing" });

      const res = await fetch(`${s.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": "masked-1" },
        body: JSON.stringify({ query: "{ projects { totalCount } }" }),
      });
      const body = (await res.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(body.errors[0]).toMatchObject({ message: "Unexpected error.", extensions: { code: "INTERNAL_SERVER_ERROR", requestId: "masked-1" } });
    } finally {
      await s.close();
    }
  });

  it("is not ready while the configured Redis is unreachable, and ready again once it answers", async () => {
    const port = await freeTcpPort(); // nothing listens there
    const s = await startTestServer({ redisUrl: `redis://127.0.0.1:${port}` });
    let redis: ReturnType<typeof spawn> | undefined;
    try {
      const down = await call(s.url, "GET", "/health/ready");
      expect(down.status).toBe(503);
      expect(down.body).toEqual({ status: "not ready", checks: { database: "ok", migrations: "ok", redis: "failing", dataDir: "ok" } });
      if (!toolAvailable("redis-server", spawnSync("redis-server", ["--version"]).status === 0)) return;
      redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", os.tmpdir()], { stdio: "ignore" });
      await waitFor(async () => (await call(s.url, "GET", "/health/ready")).status === 200, 10_000, "readiness once Redis answers");
      expect((await call(s.url, "GET", "/health/ready")).body.checks.redis).toBe("ok");
    } finally {
      await s.close();
      redis?.kill();
    }
  });

  it("is not ready while the data directory cannot take a new file, and ready again once it can", async () => {
    // Tests may run as root, where a chmod does not stop writes: the directory is moved away and a plain file
    // takes its path, so the probe's write fails (ENOTDIR) for any user. The database lives elsewhere.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-ready-"));
    const s = await startTestServer({ dataDir });
    try {
      expect((await call(s.url, "GET", "/health/ready")).status).toBe(200);
      fs.renameSync(dataDir, `${dataDir}.away`);
      fs.writeFileSync(dataDir, "not a directory");
      const broken = await call(s.url, "GET", "/health/ready");
      expect(broken.status).toBe(503);
      expect(broken.body).toEqual({ status: "not ready", checks: { database: "ok", migrations: "ok", redis: "not configured", dataDir: "failing" } });
      fs.rmSync(dataDir);
      fs.renameSync(`${dataDir}.away`, dataDir);
      const again = await call(s.url, "GET", "/health/ready");
      expect(again).toMatchObject({ status: 200, body: { status: "ready" } });
    } finally {
      await s.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(`${dataDir}.away`, { recursive: true, force: true });
    }
  });
});

describe("a configured Redis that is unreachable, on the command line", () => {
  it("is one warning through the log, not a line per retry, and the server still starts and stops", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-redis-down-"));
    let stopping: NodeJS.Timeout | undefined;
    try {
      const run = await runProcess(process.execPath, [...CLI, "--port", "0"], {
        cwd: dataDir,
        env: { ...process.env, PATCHBAY_LOG: "json", PATCHBAY_DATA_DIR: dataDir, HOST: "127.0.0.1", DATABASE_URL: "", REDIS_URL: `redis://127.0.0.1:${await freeTcpPort()}` },
        // Several reconnect attempts (ioredis retries within a second or two) after the warning, then a stop.
        onOutput: ({ stderr }, kill) => {
          if (stopping || !stderr.includes("Patchbay on ") || !stderr.includes("redis unreachable")) return;
          stopping = setTimeout(() => kill("SIGTERM"), 3000);
        },
      });
      expect(run.code, run.stderr).toBe(0); // a graceful stop, though Redis never answered
      const lines = run.stderr.trim().split("\n");
      expect(lines.filter((l) => l.includes("redis unreachable")).map((l) => JSON.parse(l))).toEqual([
        expect.objectContaining({ level: "warn", msg: "redis unreachable", error: expect.stringContaining("ECONNREFUSED") }),
      ]);
      expect(lines.filter((l) => !l.startsWith("{") && !l.startsWith("Patchbay on ")), "raw lines on stderr").toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("logs for people", () => {
  it("PATCHBAY_LOG=pretty prints each line as time, level, message and key=value, not JSON", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-pretty-"));
    try {
      let asked = false;
      const run = await runProcess(process.execPath, [...CLI, "--port", "0"], {
        cwd: dataDir,
        env: { ...process.env, PATCHBAY_LOG: "pretty", PATCHBAY_DATA_DIR: dataDir, HOST: "127.0.0.1", DATABASE_URL: "", REDIS_URL: "" },
        onOutput: ({ stdout }, kill) => {
          const url = /listening url=(\S+)/.exec(stdout)?.[1];
          if (url && !asked) {
            asked = true;
            void fetch(`${url}/v2/version`, { headers: { "x-request-id": "pretty-1" } });
          }
          if (stdout.includes("id=pretty-1")) kill("SIGTERM");
        },
      });
      expect(run.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}listening url=http:\/\/127\.0\.0\.1:\d+ database=sqlite$/m);
      expect(run.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}request id=pretty-1 method=GET path=\/v2\/version status=200 ms=[\d.]+$/m);
      expect(run.stdout).not.toMatch(/^\{/m);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
