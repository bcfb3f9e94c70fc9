import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 19 points 4-5, issue 23 point 2: one origin policy for REST, GraphQL (HTTP, SSE, graphql-ws) and the
 * GNS3 notification sockets. A page of a foreign origin gets nothing and changes nothing; a listed origin gets
 * gns3-server's CORS answers; requests without Origin (curl, the GNS3 GUI, Ansible) and the server's own pages pass.
 */
const FOREIGN = "http://evil.example";
const LISTED = "http://localhost:4200";
const GNS3_CORS = {
  "access-control-allow-origin": LISTED,
  "access-control-allow-credentials": "true",
  "access-control-expose-headers": "X-Route,Server,Content-Length,Connection,Date",
};

/** A browser's Fetch Metadata exactly as given (fetch would add its own Sec-Fetch-Mode). */
const NAVIGATION = { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) =>
    http.get(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on("error", reject),
  );

const corsHeaders = (h: Headers) => Object.fromEntries([...h].filter(([k]) => k.startsWith("access-control-")));

/** The status a WebSocket upgrade of `path` gets (101 once open). */
function upgradeStatus(s: TestServer, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(s.url.replace(/^http/, "ws") + path, path === "/graphql" ? "graphql-transport-ws" : [], { headers });
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("error", reject);
  });
}

const createProject = (s: TestServer, name: string, headers: Record<string, string>, contentType: string, body: string) =>
  fetch(`${s.url}/v2/projects`, { method: "POST", headers: { "content-type": contentType, ...headers }, body: body.replace("NAME", name) });

const projectNames = async (s: TestServer) => (await call(s.url, "GET", "/v2/projects")).body.map((p: { name: string }) => p.name);
const svmNames = async (s: TestServer) => (await call(s.url, "GET", "/api/svm/svms")).body.records.map((r: { name: string }) => r.name);

describe("origin policy: same origin only (no origins listed)", () => {
  let s: TestServer;
  let projectId: string;
  beforeAll(async () => {
    s = await startTestServer();
    projectId = (await call(s.url, "POST", "/v2/projects", { name: "existing" })).body.project_id;
  });
  afterAll(() => s.close());

  it("refuses a foreign page's text/plain and form POSTs to /v2/projects before they run (GNS3 error shape)", async () => {
    for (const [type, body] of [["text/plain", '{"name":"NAME"}'], ["application/x-www-form-urlencoded", "name=NAME"], ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nNAME\r\n--x--']]) {
      const res = await createProject(s, `csrf-${type}`, { origin: FOREIGN }, type, body);
      expect(res.status, type).toBe(403);
      expect(await res.json()).toEqual({ message: expect.stringContaining(FOREIGN), status: 403 });
      expect(corsHeaders(res.headers)).toEqual({});
    }
    expect(await projectNames(s)).toEqual(["existing"]);
  });

  it("refuses a foreign page's text/plain and form POSTs to /api/svm/svms (ONTAP error shape)", async () => {
    for (const [type, body] of [["text/plain", '{"name":"csrf1"}'], ["application/x-www-form-urlencoded", "name=csrf2"]]) {
      const res = await fetch(`${s.url}/api/svm/svms`, { method: "POST", headers: { origin: FOREIGN, "content-type": type }, body });
      expect(res.status, type).toBe(403);
      expect(await res.json()).toEqual({ error: { message: expect.stringContaining("not listed in PATCHBAY_CORS_ORIGINS"), code: "6" } });
    }
    expect(await svmNames(s)).toEqual([]);
  });

  it("refuses every other method and the reads a foreign page's script makes, streams included", async () => {
    for (const [method, path] of [["DELETE", `/v2/projects/${projectId}`], ["PUT", `/v2/projects/${projectId}`], ["GET", "/v2/projects"], ["GET", `/v2/projects/${projectId}/notifications`], ["GET", "/v2/notifications"]]) {
      const res = await fetch(s.url + path, { method, headers: { origin: FOREIGN } });
      expect(res.status, `${method} ${path}`).toBe(403);
      await res.body?.cancel();
    }
    expect(await projectNames(s)).toEqual(["existing"]);
  });

  it("tells a cross-site request without Origin by Sec-Fetch-Site: only a top-level navigation passes", async () => {
    expect(await rawGet(`${s.url}/v2/notifications`, { ...NAVIGATION, "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" })).toBe(403);
    expect(await rawGet(`${s.url}/graphql`, { ...NAVIGATION, accept: "text/html", "sec-fetch-dest": "iframe" })).toBe(403);
    expect(await rawGet(`${s.url}/`, NAVIGATION)).toBe(200);
    expect(await rawGet(`${s.url}/graphql`, { ...NAVIGATION, accept: "text/html" })).toBe(200);
    expect(await rawGet(`${s.url}/v2/version`, { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" })).toBe(200);
    const script = await fetch(`${s.url}/v2/version`, { headers: { "sec-fetch-site": "cross-site" } });
    expect(await script.json()).toEqual({ message: "Cross-site request refused", status: 403 });
  });

  it("answers GraphQL from a foreign origin 403 CSRF_PREVENTED with no Access-Control-* header, before the mutation runs", async () => {
    for (const origin of [FOREIGN, "null"]) {
      const res = await fetch(`${s.url}/graphql`, {
        method: "POST",
        headers: { origin, "content-type": "application/json" },
        body: JSON.stringify({ query: `mutation { createProject(input: { name: "via-graphql" }) { __typename } }` }),
      });
      expect(res.status).toBe(403);
      expect(corsHeaders(res.headers)).toEqual({});
      expect((await res.json()).errors[0].extensions.code).toBe("CSRF_PREVENTED");
    }
    const sse = await fetch(`${s.url}/graphql?query=${encodeURIComponent("subscription { projectEvents { __typename } }")}`, { headers: { origin: FOREIGN, accept: "text/event-stream" } });
    expect(sse.status).toBe(403);
    expect(await projectNames(s)).toEqual(["existing"]);
  });

  it("refuses a foreign preflight with gns3-server's 403 and no Access-Control-* header", async () => {
    const res = await fetch(`${s.url}/v2/projects`, { method: "OPTIONS", headers: { origin: FOREIGN, "access-control-request-method": "POST" } });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe("CORS preflight request failed");
    expect(corsHeaders(res.headers)).toEqual({});
  });

  it("refuses WebSocket upgrades from a foreign origin before the 101, on /graphql and the notification sockets", async () => {
    for (const path of ["/graphql", "/v2/notifications/ws", `/v2/projects/${projectId}/notifications/ws`]) {
      expect(await upgradeStatus(s, path, { origin: FOREIGN }), path).toBe(403);
      expect(await upgradeStatus(s, path, { origin: s.url }), path).toBe(101);
      expect(await upgradeStatus(s, path), path).toBe(101);
    }
  });

  it("lets the server's own pages (Origin equal to its URL) and clients without Origin write, without CORS headers", async () => {
    const own = await createProject(s, "same-origin", { origin: s.url }, "application/json", '{"name":"NAME"}');
    expect(own.status).toBe(201);
    expect(corsHeaders(own.headers)).toEqual({});
    const curl = await createProject(s, "no-origin", {}, "application/json", '{"name":"NAME"}');
    expect(curl.status).toBe(201);
    const r = await gql(s.url, "{ storageVersion }", undefined, { origin: s.url });
    expect(r.data.storageVersion).toBeTruthy();
    expect(await projectNames(s)).toEqual(expect.arrayContaining(["same-origin", "no-origin"]));
  });

  it("keeps the GraphQL form-POST rule for requests without Origin (GraphQL-Preflight)", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const body = `query=${encodeURIComponent("{ storageVersion }")}`;
    const refused = await fetch(`${s.url}/graphql`, { method: "POST", headers: form, body });
    expect(refused.status).toBe(403);
    expect((await refused.json()).errors[0].extensions.code).toBe("CSRF_PREVENTED");
    const allowed = await fetch(`${s.url}/graphql`, { method: "POST", headers: { ...form, "graphql-preflight": "1" }, body });
    expect(allowed.status).toBe(200);
  });
});

describe("origin policy: a listed origin (the GNS3 Web UI served elsewhere), with authentication", () => {
  let s: TestServer;
  const credentials = { authorization: `Basic ${Buffer.from("admin:s3cret").toString("base64")}` };
  beforeAll(async () => void (s = await startTestServer({ corsOrigins: [LISTED], auth: { user: "admin", password: "s3cret" } })));
  afterAll(() => s.close());

  it("answers REST with exactly gns3-server's CORS headers, 401 included (the UI reads it)", async () => {
    const version = await call(s.url, "GET", "/v2/version", undefined, { origin: LISTED, ...credentials });
    expect(version.status).toBe(200);
    expect(corsHeaders(version.headers)).toEqual(GNS3_CORS);
    const created = await createProject(s, "from-web-ui", { origin: LISTED, ...credentials }, "application/json", '{"name":"NAME"}');
    expect(created.status).toBe(201);
    expect(corsHeaders(created.headers)).toEqual(GNS3_CORS);
    const anonymous = await call(s.url, "GET", "/v2/version", undefined, { origin: LISTED });
    expect(anonymous.status).toBe(401);
    expect(corsHeaders(anonymous.headers)).toEqual(GNS3_CORS);
  });

  it("answers GraphQL with the same headers", async () => {
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { origin: LISTED, "content-type": "application/json", ...credentials },
      body: JSON.stringify({ query: "{ storageVersion }" }),
    });
    expect(res.status).toBe(200);
    expect(corsHeaders(res.headers)).toEqual(GNS3_CORS);
    expect((await res.json()).data.storageVersion).toBeTruthy();
  });

  it("answers its preflight 200 without credentials: the method asked, the headers asked upper-cased, Max-Age 0", async () => {
    for (const path of ["/v2/projects", "/graphql", "/api/svm/svms"]) {
      const res = await fetch(s.url + path, {
        method: "OPTIONS",
        headers: { origin: LISTED, "access-control-request-method": "POST", "access-control-request-headers": "content-type, authorization" },
      });
      expect(res.status, path).toBe(200);
      expect(corsHeaders(res.headers)).toEqual({
        "access-control-allow-origin": LISTED,
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": "POST",
        "access-control-allow-headers": "CONTENT-TYPE,AUTHORIZATION",
        "access-control-max-age": "0",
      });
    }
  });

  it("accepts its WebSocket upgrades (credentials still checked) and still refuses an unlisted origin", async () => {
    for (const path of ["/graphql", "/v2/notifications/ws"]) {
      expect(await upgradeStatus(s, path, { origin: LISTED, ...credentials }), path).toBe(101);
      expect(await upgradeStatus(s, path, { origin: LISTED }), path).toBe(401);
      expect(await upgradeStatus(s, path, { origin: FOREIGN, ...credentials }), path).toBe(403);
    }
    const res = await createProject(s, "from-evil", { origin: FOREIGN, ...credentials }, "application/json", '{"name":"NAME"}');
    expect(res.status).toBe(403);
    expect(corsHeaders(res.headers)).toEqual({});
  });

  it("gives its streams and its errors the same headers: the notification stream, a GraphQL SSE subscription, a 404", async () => {
    const stream = await fetch(`${s.url}/v2/notifications`, { headers: { origin: LISTED, ...credentials } });
    expect(stream.status).toBe(200);
    expect(corsHeaders(stream.headers)).toEqual(GNS3_CORS);
    await stream.body?.cancel();
    const query = encodeURIComponent("subscription { controllerEvents { __typename } }");
    const sse = await fetch(`${s.url}/graphql?query=${query}`, { headers: { origin: LISTED, accept: "text/event-stream", ...credentials } });
    expect(sse.status).toBe(200);
    expect(corsHeaders(sse.headers)).toEqual(GNS3_CORS);
    await sse.body?.cancel();
    const missing = await call(s.url, "GET", "/v2/projects/00000000-0000-4000-8000-000000000000", undefined, { origin: LISTED, ...credentials });
    expect(missing.status).toBe(404);
    expect(corsHeaders(missing.headers)).toEqual(GNS3_CORS);
  });

  it("answers the preflight of every method the Web UI sends, and refuses the same preflights from an unlisted origin", async () => {
    const project = "/v2/projects/00000000-0000-4000-8000-000000000000";
    for (const [method, path] of [["GET", "/v2/version"], ["POST", "/v2/projects"], ["PUT", `${project}/nodes/00000000-0000-4000-8000-000000000001`], ["DELETE", project], ["POST", `${project}/nodes/start`]]) {
      const preflight = (origin: string) =>
        fetch(s.url + path, { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": "authorization,content-type" } });
      const listed = await preflight(LISTED);
      expect(listed.status, `${method} ${path}`).toBe(200);
      expect(corsHeaders(listed.headers), `${method} ${path}`).toMatchObject({ "access-control-allow-origin": LISTED, "access-control-allow-methods": method, "access-control-allow-headers": "AUTHORIZATION,CONTENT-TYPE" });
      const foreign = await preflight(FOREIGN);
      expect(foreign.status, `${method} ${path}`).toBe(403);
      expect(await foreign.text()).toBe("CORS preflight request failed");
      expect(corsHeaders(foreign.headers)).toEqual({});
    }
  });

  it("still opens a signed download URL without credentials, from the listed origin and as a link followed", async () => {
    const r = await gql(s.url, `{ symbols(first: 1) { edges { node { symbolId rawUrl { ... on DownloadUrl { url } } } } } }`, undefined, credentials);
    const url = r.data.symbols.edges[0].node.rawUrl.url;
    const fromUi = await fetch(s.url + url, { headers: { origin: LISTED } });
    expect(fromUi.status).toBe(200);
    expect(corsHeaders(fromUi.headers)).toEqual(GNS3_CORS);
    expect(await rawGet(s.url + url, NAVIGATION)).toBe(200);
  });
});

describe("origin policy: the origins a user lists for the Web UI (its development server and the hosted copy)", () => {
  let s: TestServer;
  const UI_ORIGINS = ["http://127.0.0.1:4200", "http://localhost:4200", "https://gns3.github.io"];
  beforeAll(async () => void (s = await startTestServer({ corsOrigins: UI_ORIGINS })));
  afterAll(() => s.close());

  it("echoes each listed origin exactly (never *), with Vary: Origin", async () => {
    for (const origin of UI_ORIGINS) {
      const r = await call(s.url, "GET", "/v2/version", undefined, { origin });
      expect(r.status, origin).toBe(200);
      expect(corsHeaders(r.headers), origin).toEqual({ ...GNS3_CORS, "access-control-allow-origin": origin });
      expect(r.headers.get("vary"), origin).toMatch(/\bOrigin\b/);
    }
  });

  it("treats another scheme, port or host of a listed origin as foreign: no header, refused", async () => {
    for (const origin of ["http://gns3.github.io", "http://localhost:4201", "https://127.0.0.1:4200", "https://evil.gns3.github.io", "https://gns3.github.io.evil.example"]) {
      const r = await call(s.url, "GET", "/v2/version", undefined, { origin });
      expect(r.status, origin).toBe(403);
      expect(corsHeaders(r.headers), origin).toEqual({});
      expect(await upgradeStatus(s, "/v2/notifications/ws", { origin }), origin).toBe(403);
    }
    expect(await upgradeStatus(s, "/v2/notifications/ws", { origin: "https://gns3.github.io" })).toBe(101);
  });
});

describe("origin policy: the own origin's scheme is the listener's (TLS)", () => {
  let s: TestServer;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-origin-tls-"));
  beforeAll(async () => {
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
      "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")], { stdio: "ignore" });
    s = await startTestServer({ tls: { certFile: path.join(dir, "cert.pem"), keyFile: path.join(dir, "key.pem") } });
  });
  afterAll(() => s.close());

  const post = (origin: string) =>
    new Promise<number>((resolve, reject) => {
      const req = https.request(`${s.url}/v2/projects`, { method: "POST", rejectUnauthorized: false, headers: { origin, "content-type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject).end(JSON.stringify({ name: `from ${new URL(origin).protocol}` }));
    });

  it("takes https://<Host> as its own origin and the same host over http as another", async () => {
    expect(await post(s.url)).toBe(201);
    expect(await post(s.url.replace("https:", "http:"))).toBe(403);
  });
});
