import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";

/**
 * The GNS3 GUI parses a body only when Content-Type is exactly "application/json" (string equality) and decodes
 * a streamed body of that type as JSON documents (gui-compat §1). Generated from the route table: every route is
 * called, with unknown ids (errors) and with real ids (GET), and every answer must carry the exact header.
 */
const JSON_TYPE = "application/json";
const PLAIN_TEXT = "text/plain; charset=utf-8"; // GNS3's (aiohttp's) unknown-route and wrong-method answers

/** Routes whose success body is a byte stream, and the types GNS3 gives them. */
const STREAMS: [RegExp, RegExp][] = [
  [/\/pcap$/, /^application\/vnd\.tcpdump\.pcap$/],
  [/\/export$/, /^application\/gns3project$/],
  [/\/(files|stream)\/\{path:\.\+\}$/, /^(text\/plain|image\/[a-z+]+|application\/(octet-stream|vnd\.tcpdump\.pcap))$/],
  [/^\/v2\/symbols\/\{symbol_id:\.\+\}$/, /^image\/(svg\+xml|png|gif|jpeg)$/],
  [/^\/v2\/(debug|shutdown)$/, /^application\/octet-stream$/],
  [/\/images\/\{filename:\.\+\}$/, /^application\/octet-stream$/], // an emulator image (the POST before it uploaded one)
];

interface Answer {
  status: number;
  type: string | null;
  text: string;
}

/** Calls a route; endless streams (notifications, pcap, file tails) are cut after their first chunks. */
async function request(base: string, method: string, url: string, body?: string): Promise<Answer> {
  const controller = new AbortController();
  const res = await fetch(base + url, {
    method,
    signal: controller.signal,
    headers: body === undefined ? {} : { "content-type": JSON_TYPE },
    body,
  });
  if (!res.body) return { status: res.status, type: res.headers.get("content-type"), text: "" }; // 204, 304
  const reader = res.body.getReader();
  const cut = setTimeout(() => controller.abort(), 1000);
  const chunks: Uint8Array[] = [];
  let streaming = false;
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
  } catch {
    streaming = true;
  }
  clearTimeout(cut);
  const text = Buffer.concat(chunks).toString("utf8");
  // An NDJSON stream is JSON line by line: its first line stands for the body.
  return { status: res.status, type: res.headers.get("content-type"), text: streaming && res.status === 200 ? text.split("\n")[0] : text };
}

function checkWire(label: string, pattern: string, a: Answer): void {
  expect(a.status, `${label} → ${a.text.slice(0, 200)}`).not.toBe(500);
  if (a.text === "404: Not Found" || a.text === "405: Method Not Allowed") return void expect(a.type, label).toBe(PLAIN_TEXT);
  if (!a.text) return void expect(a.type ?? "", label).not.toMatch(/charset/);
  const stream = STREAMS.find(([p]) => p.test(pattern));
  if (stream && a.status < 300) {
    expect(a.type, label).toMatch(stream[1]);
    return;
  }
  expect(a.type, label).toBe(JSON_TYPE);
  expect(() => JSON.parse(a.text), label).not.toThrow();
  if (a.status >= 400) expect(JSON.parse(a.text), label).toMatchObject({ message: expect.any(String), status: a.status });
}

describe("emulation: exact wire headers on every GNS3 route", () => {
  let s: TestServer;
  let routes: { method: string; pattern: string }[];
  const real: Record<string, string> = {};
  beforeAll(async () => {
    s = await startTestServer({ local: false }); // /v2/shutdown and /v2/debug answer 403 instead of acting
    // The server's own route table (Express syntax) written back in GNS3's pattern syntax.
    routes = s
      .routes()
      .filter((r) => r.path.startsWith("/v2/"))
      .map((r) => ({ method: r.method, pattern: r.path.replace(/\*(\w+)$/, "{$1:.+}").replace(/:(\w+)/g, "{$1}") }));
    const p = (await call(s.url, "POST", "/v2/projects", { name: "wire" })).body;
    const P = `/v2/projects/${p.project_id}`;
    const hub = (await call(s.url, "POST", `${P}/nodes`, { name: "Hub1", node_type: "ethernet_hub", compute_id: "local" })).body;
    const sw = (await call(s.url, "POST", `${P}/nodes`, { name: "Switch1", node_type: "ethernet_switch", compute_id: "local" })).body;
    const link = (
      await call(s.url, "POST", `${P}/links`, {
        nodes: [
          { node_id: hub.node_id, adapter_number: 0, port_number: 0 },
          { node_id: sw.node_id, adapter_number: 0, port_number: 0 },
        ],
      })
    ).body;
    const snapshot = (await call(s.url, "POST", `${P}/snapshots`, { name: "snap" })).body;
    expect((await call(s.url, "POST", `${P}/links/${link.link_id}/start_capture`, {})).status).toBe(201); // GET …/pcap streams
    await call(s.url, "POST", `${P}/files/README.txt`, "read me");
    const templates = (await call(s.url, "GET", "/v2/templates")).body;
    Object.assign(real, {
      project_id: p.project_id,
      node_id: hub.node_id,
      link_id: link.link_id,
      snapshot_id: snapshot.snapshot_id,
      template_id: Array.isArray(templates) ? templates[0]?.template_id : randomUUID(),
    });
  });
  afterAll(() => s.close());

  const concrete = (pattern: string, ids: Record<string, string>) =>
    pattern
      .replace("{path:.+}", "README.txt")
      .replace("{symbol_id:.+}", "%3A/symbols/computer.svg/raw")
      .replace("{action:.+}", "images")
      .replace(/\{(\w+)\}/g, (_m, name: string) =>
        ({ compute_id: "local", emulator: "vpcs", adapter_number: "0", port_number: "0", engine: "virtualbox" })[name] ?? ids[name] ?? randomUUID(),
      );

  it("the route table is the server's (and holds the GUI's routes)", () => {
    const patterns = routes.map((r) => `${r.method} ${r.pattern}`);
    expect(patterns).toContain("GET /v2/version");
    expect(patterns).toContain("GET /v2/templates");
    expect(patterns).toContain("POST /v2/projects/{project_id}/templates/{template_id}");
    expect(routes.length).toBeGreaterThan(100);
  });

  it("errors (unknown ids, empty bodies): JSON with the exact header, or GNS3's plain 404/405", async () => {
    for (const { method, pattern } of routes) {
      const url = concrete(pattern, {});
      const a = await request(s.url, method, url, method === "GET" || method === "DELETE" ? undefined : "{}");
      checkWire(`${method} ${url}`, pattern, a);
    }
  });

  it("successful reads on real ids: JSON exactly, streams never JSON", async () => {
    const succeeded = new Set<string>();
    for (const { method, pattern } of routes.filter((r) => r.method === "GET")) {
      const url = concrete(pattern, real);
      const a = await request(s.url, method, url);
      checkWire(`${method} ${url}`, pattern, a);
      if (a.status < 300) succeeded.add(pattern);
    }
    expect(succeeded.size).toBeGreaterThan(40);
    // The byte streams were really served (not refused), so their types were checked.
    for (const stream of ["/links/{link_id}/pcap", "/projects/{project_id}/export", "/projects/{project_id}/files/{path:.+}", "/symbols/{symbol_id:.+}"]) {
      expect([...succeeded].some((p) => p.endsWith(stream)), stream).toBe(true);
    }
  });

  it("an unknown method on every path: 405 in plain text", async () => {
    for (const pattern of new Set(routes.map((r) => r.pattern))) {
      const a = await request(s.url, "PATCH", concrete(pattern, real), "{}");
      expect([a.status, a.type, a.text], pattern).toEqual([405, PLAIN_TEXT, "405: Method Not Allowed"]);
    }
  });

  it("unknown routes, malformed JSON and oversized bodies keep their exact types", async () => {
    const nope = await request(s.url, "GET", "/v2/nope");
    expect([nope.status, nope.type, nope.text]).toEqual([404, PLAIN_TEXT, "404: Not Found"]);
    const bad = await request(s.url, "POST", "/v2/projects", "{nope");
    expect([bad.status, bad.type]).toEqual([400, JSON_TYPE]);
    const big = await request(s.url, "POST", "/v2/projects", JSON.stringify({ name: "x".repeat(20 * 1024 * 1024) }));
    expect([big.status, big.type]).toEqual([413, JSON_TYPE]);
    expect(JSON.parse(big.text)).toMatchObject({ status: 413 });
  });
});
