import { randomUUID } from "node:crypto";
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import type { RouteEntry } from "../../src/platform/http/route-table.js";
import { postRule, storageFixture } from "../storage/fixture.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";

/**
 * Malformed bodies, queries and paths sent to every REST route of both faces — generated from the server's own
 * router stacks, so a new route is fuzzed without editing this file — and to /graphql. No answer may be a 5xx (or
 * a dropped connection), and afterwards the server still serves. Path parameters get plausible ids (a real
 * project, node, volume...) so handlers run past their lookups; writes and deletes run after the reads. Beyond
 * the router table: raw, cut and oddly typed uploads (images, project and node files, GraphQL multipart), forged
 * signed-URL tokens, GraphQL over SSE, and malformed frames and upgrades on every WebSocket endpoint (graphql-ws,
 * GNS3 notifications of the controller, a project and the compute).
 */

/**
 * Routes with a known 5xx that another area owns, as `METHOD path` with the case label; the owners empty this
 * list (every entry is also named in /tmp/coord/NOTES.md). An entry that stops failing fails the test, so the
 * list cannot go stale.
 */
const EXPECTED_FAILURES: string[] = [];

const BODIES: [string, string][] = [
  ["invalid JSON", "{bad json"],
  ["deep nesting", '{"a":'.repeat(5_000) + "1" + "}".repeat(5_000)],
  ["deep arrays", "[".repeat(5_000) + "]".repeat(5_000)],
  ["__proto__ key", '{"__proto__": {"polluted": true}, "name": "fz"}'],
  ["constructor key", '{"constructor": {"prototype": {"polluted": true}}}'],
  ["dotted __proto__", '{"__proto__.polluted": true, "svm.__proto__.polluted": true}'],
  ["array", '[{"name": "fz"}, 1]'],
  ["string", '"fz"'],
  ["number", "-1e309"],
  ["null", "null"],
  ["wrong types", '{"name": {"a": []}, "project_id": 12, "node_id": [], "x": "left", "properties": "p", "nodes": {"a": 1}, "size": "huge", "svm": "s", "users": 5, "path": ["/"], "compute_id": false}'],
  ["huge string", JSON.stringify({ name: "x".repeat(300_000), path: "y".repeat(100_000) })],
];

const QUERIES: [string, string][] = [
  ["__proto__ parameter", "__proto__=1&constructor.prototype.polluted=1"],
  ["prototype fields=", "fields=__proto__.polluted,constructor"],
  ["bad percent-encoding", "x=%ff%fe&name=%E0%A4%A"],
  ["long value", `name=${"q".repeat(20_000)}`],
  ["control values", "max_records=-1&order_by=zzz%20up&start.offset=99999999999999999999&return_timeout=1e9&return_records=maybe"],
  ["bracket names", "a[b][c]=1&a[]=2&&&=&x"],
];

/** Bad values for one path parameter (raw: sent as written, no client-side normalisation). */
const PATH_VALUES: [string, string][] = [
  ["bad percent-encoding", "%ff%fe"],
  ["NUL", "%00"],
  ["encoded traversal", "..%2F..%2F..%2Fetc%2Fpasswd"],
  ["backslash traversal", "..%5C..%5Cwin.ini"],
  ["dot-dot", ".."],
  ["long segment", "s".repeat(5_000)],
];
/** Extra bad values for a tail parameter (`*path`), which may span segments. */
const TAIL_VALUES: [string, string][] = [
  ["raw traversal", "../../../../etc/passwd"],
  ["absolute", "/etc/passwd"],
];

interface Answer {
  status: number;
  error?: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** A raw HTTP request; resolves on the response head (streams are cut there) or on a dropped connection. */
function send(base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        agent,
        // Framed explicitly: Node's client sends a DELETE body without Content-Length otherwise.
        headers: { ...(body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) }), ...headers },
      },
      (res) => {
        resolve({ status: res.statusCode ?? 0 });
        const ends = res.headers["content-length"] !== undefined || res.statusCode === 204 || res.statusCode === 304;
        if (ends) res.resume();
        else res.destroy(); // a notification stream or a file tail: the status is all we need
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error("timeout")));
    req.on("error", (e) => resolve({ status: 0, error: e.message }));
    req.end(body);
  });
}

/**
 * A WebSocket upgrade by hand, then `frame` written raw: what no client library would send. Resolves once the
 * server has answered and closed (or after a second). A refused upgrade whose socket the server kept open would
 * hold its close() (afterAll) open: that is how a leak of them shows here.
 */
function rawUpgrade(path: string, protocol: string | undefined, frame?: Buffer, headers: Record<string, string> = {}): Promise<void> {
  const url = new URL(s.url);
  const socket = net.connect(Number(url.port), url.hostname);
  const head = { host: url.host, upgrade: "websocket", connection: "Upgrade", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", ...(protocol ? { "sec-websocket-protocol": protocol } : {}), ...headers };
  socket.write(`GET ${path} HTTP/1.1\r\n${Object.entries(head).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`);
  socket.once("data", () => frame && socket.write(frame));
  return new Promise((resolve) => {
    const done = () => (socket.destroy(), resolve());
    socket.once("close", done);
    socket.once("error", done);
    setTimeout(done, 1000);
  });
}

let s: TestServer;
const ids: Record<string, string> = {};
/** The telnet console of a switch, played here (it echoes), so that console sockets open and get the frames. */
let fakeConsole: net.Server | undefined;

beforeAll(async () => {
  s = await startTestServer({ local: false }); // /v2/shutdown answers 403 instead of stopping the server under test
  const storage = await storageFixture(s.url);
  const rule = await postRule(s.url, { type: "tree", "qtree.name": "qt1", "files.hard_limit": "3" });
  const qtree = await call(s.url, "GET", `/api/storage/qtrees?volume.uuid=${storage.volumeUuid}&name=qt1&fields=id`);
  const p = (await call(s.url, "POST", "/v2/projects", { name: "fuzz" })).body;
  const P = `/v2/projects/${p.project_id}`;
  const hub = (await call(s.url, "POST", `${P}/nodes`, { name: "Hub1", node_type: "ethernet_hub", compute_id: "local" })).body;
  const sw = (await call(s.url, "POST", `${P}/nodes`, { name: "Switch1", node_type: "ethernet_switch", compute_id: "local" })).body;
  const link = await call(s.url, "POST", `${P}/links`, {
    nodes: [
      { node_id: hub.node_id, adapter_number: 0, port_number: 0 },
      { node_id: sw.node_id, adapter_number: 0, port_number: 0 },
    ],
  });
  const withConsole = (await call(s.url, "POST", `${P}/nodes`, { name: "Switch2", node_type: "ethernet_switch", compute_id: "local", console_type: "telnet" })).body;
  fakeConsole = net.createServer((socket) => socket.on("error", () => {}).pipe(socket));
  await new Promise<void>((resolve) => fakeConsole!.listen(withConsole.console, "127.0.0.1", resolve));
  const snapshot = await call(s.url, "POST", `${P}/snapshots`, { name: "snap" });
  const drawing = await call(s.url, "POST", `${P}/drawings`, { svg: "<svg></svg>", x: 1, y: 2 });
  await call(s.url, "POST", `${P}/files/README.txt`, "read me");
  const templates = (await call(s.url, "GET", "/v2/templates")).body;
  Object.assign(ids, {
    svm: storage.svmUuid,
    volume: storage.volumeUuid,
    rule: rule.body.records?.[0]?.uuid ?? randomUUID(),
    job: /[0-9a-f-]{36}$/.exec(rule.body.job?._links?.self?.href ?? "")?.[0] ?? randomUUID(),
    qtreeId: String(qtree.body.records?.[0]?.id ?? 1),
    project_id: p.project_id,
    node_id: hub.node_id,
    console_node_id: withConsole.node_id,
    link_id: link.body.link_id ?? randomUUID(),
    snapshot_id: snapshot.body.snapshot_id ?? randomUUID(),
    drawing_id: drawing.body.drawing_id ?? randomUUID(),
    template_id: Array.isArray(templates) && templates[0] ? templates[0].template_id : randomUUID(),
  });
});
afterAll(async () => {
  agent.destroy();
  await s.close();
  await new Promise((r) => (fakeConsole ? fakeConsole.close(r) : r(undefined)));
});

/** A plausible value for each path parameter, so handlers get past their lookups. */
function plausible(path: string, name: string): string {
  if (name === "uuid") {
    if (path.startsWith("/api/svm/")) return ids.svm;
    if (path.startsWith("/api/storage/volumes")) return ids.volume;
    if (path.startsWith("/api/cluster/jobs")) return ids.job;
    return ids.rule;
  }
  const fixed: Record<string, string> = {
    volume: ids.volume, id: ids.qtreeId, index: "1", compute_id: "local", emulator: "vpcs", engine: "virtualbox",
    adapter_number: "0", port_number: "0", path: "README.txt", symbol_id: "%3A/symbols/computer.svg", action: "images",
  };
  return fixed[name] ?? ids[name] ?? randomUUID();
}

const PARAM = /([:*])(\w+)/g;
const concrete = (path: string, override?: { name: string; value: string }) =>
  path.replace(PARAM, (_m, _kind, name: string) => (override?.name === name ? override.value : plausible(path, name)));

/** Reads first, then writes, deletes last (a deleted project turns later cases into 404s, still no 5xx). */
const ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

describe("fuzz: every route, malformed input, never a 5xx", () => {
  let routes: RouteEntry[];
  const failures: string[] = [];
  let sent = 0;

  const probe = async (route: RouteEntry, label: string, path: string, body?: string, headers?: Record<string, string>) => {
    const a = await send(s.url, route.method, path, body, headers);
    sent++;
    if (a.status >= 500 || a.status === 0) failures.push(`${route.method} ${route.path} [${label}] → ${a.status || a.error}`);
  };

  beforeAll(() => {
    routes = s.routes().sort((a, b) => ORDER.indexOf(a.method) - ORDER.indexOf(b.method));
  });

  it("the route table is the server's: both faces, every method", () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    expect(names).toContain("PATCH /api/storage/volumes/:uuid");
    expect(names).toContain("POST /api/svm/svms");
    expect(names).toContain("POST /v2/projects/:project_id/nodes");
    expect(names).toContain("GET /v2/projects/:project_id/files/*path");
    expect(routes.length).toBeGreaterThan(150);
  });

  /** Every malformed variant of one route's request. */
  const casesOf = (route: RouteEntry): (() => Promise<void>)[] => {
    const cases: (() => Promise<void>)[] = [];
    const emptyBody = route.method === "GET" ? undefined : "{}";
    const path = concrete(route.path);
    for (const [label, query] of QUERIES) cases.push(() => probe(route, `query: ${label}`, `${path}?${query}`, emptyBody));
    if (route.method !== "GET") for (const [label, body] of BODIES) cases.push(() => probe(route, `body: ${label}`, path, body));
    for (const [, kind, name] of route.path.matchAll(PARAM)) {
      for (const [label, value] of [...PATH_VALUES, ...(kind === "*" ? TAIL_VALUES : [])]) {
        cases.push(() => probe(route, `path ${name}: ${label}`, concrete(route.path, { name, value }), emptyBody));
      }
    }
    return cases;
  };

  /** Reads run four at a time (they change nothing); writes one by one, so their outcome never depends on timing. */
  const run = async (cases: (() => Promise<void>)[], parallel: number) => {
    const queue = [...cases];
    await Promise.all(Array.from({ length: parallel }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await next();
    }));
  };

  it("sends malformed bodies, queries and paths to every route", { timeout: 240_000 }, async () => {
    await run(routes.filter((r) => r.method === "GET").flatMap(casesOf), 4);
    await run(routes.filter((r) => r.method !== "GET").flatMap(casesOf), 1);
    const unexpected = failures.filter((f) => !EXPECTED_FAILURES.some((e) => f.startsWith(e)));
    const fixed = EXPECTED_FAILURES.filter((e) => !failures.some((f) => f.startsWith(e)));
    expect(unexpected, `${unexpected.length} of ${sent} requests answered 5xx or dropped`).toEqual([]);
    expect(fixed, "these no longer fail: remove them from EXPECTED_FAILURES").toEqual([]);
  });

  it("sends malformed requests to /graphql", async () => {
    const graphql = { method: "POST", path: "/graphql" };
    for (const [label, body] of BODIES) await probe(graphql, `body: ${label}`, "/graphql", body);
    const documents = [
      "{",
      "{ svms { name } } }",
      "query Q($v: JSON) { __typename } query Q { __typename }",
      "{ " + "svms { ".repeat(40) + "name" + " }".repeat(40) + " }",
      "{ quotaRules(filter: " + "{or: [".repeat(100) + "{}" + "]}".repeat(100) + ") { totalCount } }",
      "mutation { updateSettings(settings: {__proto__: {polluted: true}}) { __typename } }",
      "subscription { __typename }",
      '{ quotaRule(id: "' + "u".repeat(100_000) + '") { uuid } }',
    ];
    for (const query of documents) {
      await probe(graphql, `document ${query.slice(0, 30)}`, "/graphql", JSON.stringify({ query }));
      await probe({ method: "GET", path: "/graphql" }, `GET document ${query.slice(0, 30)}`, `/graphql?query=${encodeURIComponent(query.slice(0, 4_000))}`);
    }
    for (const variables of ["[1]", '"v"', '{"__proto__": {"x": 1}}', '{"f": {"or": ' + "[".repeat(3_000) + "]".repeat(3_000) + "}}"]) {
      await probe(graphql, `variables ${variables.slice(0, 20)}`, "/graphql", `{"query": "query($f: QuotaRuleFilter) { quotaRules(filter: $f) { totalCount } }", "variables": ${variables}}`);
    }
    for (const [label, query] of QUERIES) await probe({ method: "GET", path: "/graphql" }, `query: ${label}`, `/graphql?${query}`);
    expect(failures.filter((f) => f.includes("/graphql"))).toEqual([]);
  });

  it("sends raw, aborted and oddly typed uploads to the image and file routes", async () => {
    const P = `/v2/projects/${ids.project_id}`;
    const uploads = [
      "/v2/compute/qemu/images/", "/v2/computes/local/qemu/images/", `${P}/files/`, `${P}/nodes/${ids.node_id}/files/`, `/v2/compute/projects/${ids.project_id}/files/`,
    ];
    const names = ["fz.img", "fz.img.md5sum/x", "a/../../b", "%ff", "d%2F.hidden", "x".repeat(300)];
    const types = ["application/octet-stream", "text/plain; charset=utf-16", "multipart/form-data; boundary=z", "application/json"];
    const serverErrors = vi.spyOn(s.ctx.log, "error");
    for (const base of uploads) {
      for (const name of names) {
        for (const type of types) await probe({ method: "POST", path: base + "*" }, `upload ${name.slice(0, 20)} as ${type}`, base + name, "\u0000binary\u00ff{", { "content-type": type });
      }
      // A body cut short: the client announces a megabyte, sends a few bytes and leaves.
      await new Promise<void>((resolve) => {
        const url = new URL(s.url);
        const req = http.request({ host: url.hostname, port: url.port, method: "POST", path: `${base}cut.img`, headers: { "content-length": 1 << 20 } });
        req.on("error", () => resolve());
        req.write("only a little", () => setTimeout(() => (req.destroy(), resolve()), 50));
      });
    }
    // GraphQL's multipart upload with broken parts.
    const multipart = (parts: string) => `--z\r\n${parts}\r\n--z--\r\n`;
    const bodies = [
      multipart('Content-Disposition: form-data; name="operations"\r\n\r\n{bad'),
      multipart('Content-Disposition: form-data; name="operations"\r\n\r\n{"query":"mutation($f: File!) { uploadImage(type: QEMU, filename: \\"x\\", file: $f) { __typename } }","variables":{"f":null}}\r\n--z\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.__proto__"]}'),
      "--z\r\nno end",
    ];
    for (const body of bodies) {
      await probe({ method: "POST", path: "/graphql" }, `multipart ${body.slice(40, 60)}`, "/graphql", body, { "content-type": "multipart/form-data; boundary=z", "graphql-preflight": "1" });
    }
    expect(failures.filter((f) => f.includes("upload") || f.includes("multipart"))).toEqual([]);
    // The cut bodies got no answer to read: the server's log says whether it took them for its own errors.
    expect(serverErrors.mock.calls.map(([msg, fields]) => `${msg} ${JSON.stringify(fields).slice(0, 200)}`)).toEqual([]);
    serverErrors.mockRestore();
  });

  it("sends forged and malformed signed-URL tokens to the download routes", async () => {
    const P = `/v2/projects/${ids.project_id}`;
    const downloads = [`${P}/export`, `${P}/files/README.txt`, `${P}/nodes/${ids.node_id}/files/x`, `${P}/links/${ids.link_id}/pcap`, "/v2/compute/qemu/images/fz.img", "/v2/version"];
    const sig = "A".repeat(43);
    const tokens = [`01795708767.${sig}`, `1.${sig}`, `${"9".repeat(13)}.${sig}`, `-1.${sig}`, "%ff", "", `1.${sig}&token=1.${sig}`, `1.${"A".repeat(10_000)}`];
    for (const path of downloads) {
      for (const token of tokens) {
        for (const method of ["GET", "HEAD", "POST"]) await probe({ method, path }, `token ${token.slice(0, 16)}`, `${path}?token=${token}`);
      }
    }
    expect(failures.filter((f) => f.includes("token"))).toEqual([]);
  });

  it("sends malformed documents over GraphQL's SSE transport", async () => {
    const sse = { accept: "text/event-stream" };
    const documents = [
      "subscription {",
      "subscription { projectEvents(projectId: \"%ff\") { __typename } }",
      "subscription { controllerEvents { __typename } controllerEvents2: controllerEvents { __typename } }",
      `subscription { projectEvents(projectId: "${ids.project_id}", after: "!!!garbage") { __typename } }`,
      "{ quotaRules(first: -1, after: \"!!!\") { totalCount } }",
    ];
    for (const query of documents) {
      await probe({ method: "GET", path: "/graphql" }, `SSE ${query.slice(0, 30)}`, `/graphql?query=${encodeURIComponent(query)}`, undefined, sse);
      await probe({ method: "POST", path: "/graphql" }, `SSE ${query.slice(0, 30)}`, "/graphql", JSON.stringify({ query }), sse);
    }
    await probe({ method: "POST", path: "/graphql" }, "SSE body: invalid JSON", "/graphql", "{bad", sse);
    expect(failures.filter((f) => f.includes("SSE"))).toEqual([]);
  });

  it("sends malformed frames and upgrades to every WebSocket endpoint", { timeout: 60_000 }, async () => {
    const endpoints: [string, string | undefined][] = [
      ["/graphql", "graphql-transport-ws"],
      ["/v2/notifications/ws", undefined],
      [`/v2/projects/${ids.project_id}/notifications/ws`, undefined],
      ["/v2/compute/notifications/ws", undefined],
      [`/v2/projects/${ids.project_id}/nodes/${ids.console_node_id}/console/ws`, undefined],
      [`/v2/compute/projects/${ids.project_id}/ethernet_switch/nodes/${ids.console_node_id}/console/ws`, undefined],
    ];
    const messages: (string | Buffer)[] = [
      "{bad json",
      Buffer.from([0xff, 0x00, 0xfe]),
      JSON.stringify({ type: "subscribe", id: "1", payload: { query: "subscription { controllerEvents { __typename } }" } }), // before init
      JSON.stringify({ type: "connection_init", payload: { __proto__: { polluted: true } } }),
      JSON.stringify({ type: "connection_init" }), // twice
      JSON.stringify({ type: "subscribe", id: "x".repeat(100_000), payload: { query: "{" } }),
      JSON.stringify({ type: "subscribe", id: "2", payload: "not an object" }),
      JSON.stringify({ type: "subscribe", id: "3", payload: { query: "subscription { projectEvents(projectId: \"%ff\") { __typename } }" } }),
      JSON.stringify({ type: "complete", id: "never-subscribed" }),
      JSON.stringify({ type: "no-such-type" }),
      JSON.stringify([1, 2]),
      "x".repeat(200_000),
    ];
    for (const [path, protocol] of endpoints) {
      const ws = new WebSocket(`${s.url.replace(/^http/, "ws")}${path}`, protocol);
      await new Promise<void>((resolve) => {
        ws.once("open", () => resolve());
        ws.once("error", () => resolve());
      });
      for (const m of messages) if (ws.readyState === WebSocket.OPEN) ws.send(m);
      await new Promise((r) => setTimeout(r, 100));
      ws.terminate();
      // Frames no client library sends: unmasked, a reserved opcode, RSV bits, a 2^63 length, invalid UTF-8 text.
      const frames = [
        Buffer.from([0x81, 0x02, 0x68, 0x69]),
        Buffer.from([0x83, 0x80, 0, 0, 0, 0]),
        Buffer.from([0xf1, 0x80, 0, 0, 0, 0]),
        Buffer.from([0x82, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
        Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28]),
      ];
      for (const frame of frames) await rawUpgrade(path, protocol, frame);
      for (const headers of <Record<string, string>[]>[{ "sec-websocket-version": "8" }, { "sec-websocket-key": "" }, { upgrade: "h2c" }]) await rawUpgrade(path, protocol, undefined, headers);
    }
    expect((await call(s.url, "GET", "/v2/version")).status).toBe(200);
    expect(await gql(s.url, "{ __typename }")).toEqual({ data: { __typename: "Query" }, extensions: { cost: { requested: 0, limit: 100_000, listSize: 20 } } });
  });

  it("the server still serves every face afterwards, and no prototype was touched", async () => {
    expect(Object.prototype).not.toHaveProperty("polluted");
    expect((await call(s.url, "GET", "/v2/version")).status).toBe(200);
    expect((await call(s.url, "GET", "/v2/projects")).status).toBe(200);
    expect((await call(s.url, "GET", "/api/storage/quota/rules")).status).toBe(200);
    const svm = await call(s.url, "POST", "/api/svm/svms?return_timeout=5", { name: "after-fuzz" });
    expect(svm.status, svm.text).toBe(201);
    const project = await call(s.url, "POST", "/v2/projects", { name: "after-fuzz" });
    expect(project.status, project.text).toBe(201);
    expect(await gql(s.url, "{ svms { edges { node { name } } } }")).toMatchObject({ data: { svms: { edges: expect.any(Array) } } });
  });
});
