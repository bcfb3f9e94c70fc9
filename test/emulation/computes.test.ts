import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controllerTopic } from "../../src/emulation/core/events.js";
import { asGns3 } from "../support/gns3-events.js";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { busSubscribed, call, gql, nodesOf, onPostgres, startTestServer, type TestServer } from "../support/server.js";
import { localNodeTypes } from "../support/tools.js";

async function waitFor<T>(probe: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}


function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe("computes: registry", () => {
  let s: TestServer;
  const events: { action: string; event: any }[] = [];
  beforeAll(async () => {
    s = await startTestServer();
    const sub = s.ctx.bus.subscribe(controllerTopic);
    void (async () => {
      for await (const e of sub) events.push(asGns3(s.ctx, e));
    })();
  });
  afterAll(() => s.close());

  /** An unreachable compute (nothing listens on port 9) for the tests that change or re-post one. */
  const unreachable = async (compute_id: string, name: string) => {
    const r = await call(s.url, "POST", "/v2/computes", { compute_id, protocol: "http", host: "127.0.0.1", port: 9, user: "bob", password: "secret", name });
    expect(r.status).toBe(201);
    return r.body;
  };

  it("lists the built-in local compute: this host and port, connected, with its capabilities", async () => {
    const local = {
      compute_id: "local",
      name: os.hostname() === "gns3vm" ? "Main server" : os.hostname(),
      protocol: "http",
      host: "127.0.0.1",
      port: s.port,
      user: null,
      connected: true,
      last_error: null,
      capabilities: { version: "2.2.59", node_types: localNodeTypes(), platform: process.platform },
    };
    // A server of its own: the list must hold the local compute and nothing else, whatever other tests created.
    const fresh = await startTestServer();
    try {
      local.port = fresh.port;
      const list = await call(fresh.url, "GET", "/v2/computes");
      expect(list.status).toBe(200);
      expect(list.body).toHaveLength(1);
      expect(list.body[0]).toMatchObject(local);
    } finally {
      await fresh.close();
    }
    local.port = s.port;
    const list = await call(s.url, "GET", "/v2/computes");
    expect(list.status).toBe(200);
    expect(list.body[0]).toMatchObject(local);
    expect(typeof list.body[0].cpu_usage_percent).toBe("number");
    expect(typeof list.body[0].memory_usage_percent).toBe("number");
    const one = await call(s.url, "GET", "/v2/computes/local");
    expect(one.status).toBe(200);
    expect(one.headers.get("x-route")).toBe("/v2/computes/{compute_id}");
    expect(one.body).toMatchObject(local);
  });

  it("answers 404 for an unknown compute", async () => {
    expect(await call(s.url, "GET", "/v2/computes/doesnotexist")).toMatchObject({
      status: 404,
      body: { message: "Compute ID doesnotexist doesn't exist", status: 404 },
    });
    expect((await call(s.url, "GET", "/v2/computes/vm")).body).toEqual({
      message: "Cannot use a node on the GNS3 VM server with the GNS3 VM not configured",
      status: 404,
    });
    expect((await call(s.url, "POST", "/v2/computes", { compute_id: "vm", protocol: "http", host: "h", port: 1 })).status).toBe(400);
  });

  it("creates an unreachable compute (201, disconnected, no password) and records the connection error", async () => {
    const r = await call(s.url, "POST", "/v2/computes", {
      compute_id: "fake1",
      protocol: "http",
      host: "127.0.0.1",
      port: 9,
      user: "bob",
      password: "secret",
      name: "Fake compute",
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      capabilities: { node_types: [], version: null },
      compute_id: "fake1",
      connected: false,
      cpu_usage_percent: null,
      host: "127.0.0.1",
      last_error: null,
      memory_usage_percent: null,
      name: "Fake compute",
      port: 9,
      protocol: "http",
      user: "bob",
    });
    expect(events).toContainEqual({ action: "compute.created", event: r.body });
    const failed = await waitFor(async () => {
      const c = (await call(s.url, "GET", "/v2/computes/fake1")).body;
      return c.last_error ? c : undefined;
    });
    expect(failed.connected).toBe(false);
    expect(failed.last_error).toMatch(/ECONNREFUSED/);
    expect(JSON.stringify((await call(s.url, "GET", "/v2/computes")).body)).not.toContain("secret");
  });

  it("validates the body with GNS3's schema messages", async () => {
    const missing = await call(s.url, "POST", "/v2/computes", { protocol: "http", host: "127.0.0.1" });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      message:
        "JSON schema error with API request '/v2/computes' and JSON data '{'protocol': 'http', 'host': '127.0.0.1'}': 'port' is a required property",
      method: "POST",
      path: "/v2/computes",
      request: { host: "127.0.0.1", protocol: "http" },
      status: 400,
    });
    const enumBad = await call(s.url, "POST", "/v2/computes", { protocol: "ftp", host: "127.0.0.1", port: 1 });
    expect(enumBad.status).toBe(400);
    expect(enumBad.body.message).toMatch(/: 'ftp' is not one of \['http', 'https'\]$/);
    const extra = await call(s.url, "POST", "/v2/computes", { protocol: "http", host: "h", port: 1, colour: "red" });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toMatch(/Additional properties are not allowed \('colour' was unexpected\)$/);
    const wrongType = await call(s.url, "POST", "/v2/computes", { protocol: "http", host: "h", port: "80" });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toMatch(/'80' is not of type/);
    const outOfRange = await call(s.url, "POST", "/v2/computes", { protocol: "http", host: "h", port: 70000 });
    expect(outOfRange.status).toBe(400);
    const viaQuery = await call(s.url, "POST", "/v2/computes?debug=1", { protocol: "http", host: "h", port: 1 });
    expect(viaQuery.status).toBe(400);
  });

  it("refuses a duplicate name with 409, including the local compute's name", async () => {
    await unreachable("fake-dup", "Dup compute");
    expect(await call(s.url, "POST", "/v2/computes", { protocol: "http", host: "127.0.0.1", port: 10, name: "Dup compute" })).toMatchObject({
      status: 409,
      body: { message: 'Compute name "Dup compute" already exists', status: 409 },
    });
    const localName = (await call(s.url, "GET", "/v2/computes/local")).body.name;
    expect((await call(s.url, "POST", "/v2/computes", { protocol: "http", host: "h", port: 10, name: localName })).status).toBe(409);
  });

  it("names a compute after its address when no name is given, and answers compute_id local with the local compute", async () => {
    const r = await call(s.url, "POST", "/v2/computes", { protocol: "https", host: "10.0.0.9", port: 3080, user: "ann" });
    expect(r.status).toBe(201);
    expect(r.body.name).toBe("https://ann@10.0.0.9:3080");
    expect(r.body.compute_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await call(s.url, "DELETE", `/v2/computes/${r.body.compute_id}`)).status).toBe(204);
    const local = await call(s.url, "POST", "/v2/computes", { compute_id: "local", protocol: "http", host: "x", port: 1 });
    expect(local.status).toBe(201);
    expect(local.body.compute_id).toBe("local");
    expect(local.body.connected).toBe(true);
  });

  it("re-posting a known compute_id reconnects it (201, compute.updated) without applying the other fields", async () => {
    await unreachable("fake-repost", "Repost compute");
    const before = events.length;
    const r = await call(s.url, "POST", "/v2/computes", { compute_id: "fake-repost", protocol: "http", host: "elsewhere", port: 1 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ compute_id: "fake-repost", name: "Repost compute", host: "127.0.0.1", port: 9, connected: false });
    expect(events.slice(before)).toContainEqual({ action: "compute.updated", event: r.body });
  });

  it("updates (200, merged), then deletes idempotently, announcing each change", async () => {
    await unreachable("fake-upd", "Upd compute");
    const put = await call(s.url, "PUT", "/v2/computes/fake-upd", { name: "Upd compute renamed", port: 10 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ compute_id: "fake-upd", name: "Upd compute renamed", port: 10, host: "127.0.0.1", user: "bob", connected: false });
    expect((await call(s.url, "GET", "/v2/computes/fake-upd")).body.name).toBe("Upd compute renamed");
    expect(events).toContainEqual({ action: "compute.updated", event: put.body });
    expect((await call(s.url, "PUT", "/v2/computes/nope", { port: 10 })).status).toBe(404);
    expect((await call(s.url, "PUT", "/v2/computes/fake-upd", { port: "x" })).status).toBe(400);
    expect((await call(s.url, "PUT", "/v2/computes/fake-upd", { protocol: "gopher" })).status).toBe(400);
    expect((await call(s.url, "PUT", "/v2/computes/local", { port: 10 })).status).toBe(403);

    const before = events.length;
    expect((await call(s.url, "DELETE", "/v2/computes/fake-upd")).status).toBe(204);
    expect((await call(s.url, "DELETE", "/v2/computes/fake-upd")).status).toBe(204);
    expect((await call(s.url, "DELETE", "/v2/computes/local")).status).toBe(403);
    expect((await call(s.url, "GET", "/v2/computes/fake-upd")).status).toBe(404);
    const deleted = events.slice(before).filter((e) => e.action === "compute.deleted");
    expect(deleted).toHaveLength(1);
    expect(deleted[0].event).toMatchObject({ compute_id: "fake-upd", name: "Upd compute renamed" });
  });

  it("serves its own compute API so another instance can use it as a compute", async () => {
    expect((await call(s.url, "GET", "/v2/compute/capabilities")).body).toEqual({
      version: "2.2.59",
      node_types: localNodeTypes(),
      platform: process.platform,
    });
    expect((await call(s.url, "GET", "/v2/compute/version")).body).toEqual({ version: "2.2.59", local: false });
    const stats = (await call(s.url, "GET", "/v2/compute/statistics")).body;
    expect(stats.memory_total).toBeGreaterThan(0);
    expect(stats.load_average_percent).toHaveLength(3);
    const all = await call(s.url, "GET", "/v2/statistics");
    expect(all.status).toBe(200);
    expect(all.body[0]).toMatchObject({ compute_id: "local", statistics: { memory_total: stats.memory_total } });
  });
});

describe("computes: passwords at rest", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());
  const password = "Pw-in-clear-never-7f3a";

  it("keeps the password sealed: not in the database nor anywhere under the data directory", async () => {
    expect((await call(s.url, "POST", "/v2/computes", { compute_id: "sealed", protocol: "http", host: "127.0.0.1", port: 9, user: "u", password })).status).toBe(201);
    expect((await call(s.url, "PUT", "/v2/computes/sealed", { password: `${password}-2` })).status).toBe(200);
    const row = await s.ctx.db.compute.findUniqueOrThrow({ where: { id: "sealed" } });
    expect(row.passwordSeal).toMatch(/^v1:/);
    expect(row.passwordSeal).not.toContain(password);
    await s.ctx.db.$executeRawUnsafe(onPostgres ? "CHECKPOINT" : "PRAGMA wal_checkpoint(FULL)").catch(() => undefined);
    const files = filesUnder(s.dataDir);
    if (!onPostgres) expect(files.some((f) => f.endsWith(".db"))).toBe(true);
    for (const f of files) expect(fs.readFileSync(f).includes(password), f).toBe(false);
    const key = path.join(s.dataDir, "secret.key");
    expect(fs.statSync(key).mode & 0o777).toBe(0o600);
  });
});

describe("computes: connection monitor against a second Patchbay instance", () => {
  let a: TestServer;
  let b: TestServer | undefined;
  beforeAll(async () => {
    a = await startTestServer();
    b = await startTestServer({ auth: { user: "ops", password: "b-secret" } });
  });
  afterAll(async () => {
    await a.close();
    await b?.close();
  });

  const remote = async () => (await call(a.url, "GET", "/v2/computes/b")).body;

  it("connects with the stored password, reports capabilities and usage, and notices the compute going away and coming back", async () => {
    const port = b!.port;
    const wrong = await call(a.url, "POST", "/v2/computes", { compute_id: "b", name: "B", protocol: "http", host: "127.0.0.1", port, user: "ops", password: "nope" });
    expect(wrong.status).toBe(201);
    expect((await waitFor(async () => ((await remote()).last_error ? remote() : undefined))).last_error).toMatch(/Authentication failed/);

    const sub = a.ctx.bus.subscribe(controllerTopic);
    expect((await call(a.url, "PUT", "/v2/computes/b", { password: "b-secret" })).status).toBe(200);
    const up = await waitFor(async () => ((await remote()).connected ? remote() : undefined));
    expect(up).toMatchObject({
      connected: true,
      last_error: null,
      capabilities: { version: "2.2.59", node_types: localNodeTypes(), platform: process.platform },
    });
    expect(typeof up.cpu_usage_percent).toBe("number");
    expect(typeof up.memory_usage_percent).toBe("number");
    for (;;) {
      const { value } = await sub.next();
      const n = asGns3(a.ctx, value);
      if (n.action === "compute.updated" && n.event.connected) break; // the change was announced
    }
    await sub.return();
    const stats = (await call(a.url, "GET", "/v2/statistics")).body;
    expect(stats.map((x: any) => x.compute_id)).toEqual(["local", "b"]);

    await b!.close();
    b = undefined;
    const down = await waitFor(async () => (!(await remote()).connected ? remote() : undefined));
    expect(down.last_error).toMatch(/ECONNREFUSED|did not answer/);
    expect(down.cpu_usage_percent).toBeNull();

    b = await startTestServer({ port, auth: { user: "ops", password: "b-secret" } });
    expect((await waitFor(async () => ((await remote()).connected ? remote() : undefined))).last_error).toBeNull();
  });
});

describe("computes: GraphQL", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());
  const fields = "id computeId name protocol host port user connected lastError cpuUsagePercent capabilities { version nodeTypes platform }";

  it("creates, reads, updates and deletes through the same operations, with typed errors", async () => {
    const CREATE = `mutation($i: CreateComputeInput!) { createCompute(input: $i) { __typename ... on CreateComputePayload { compute { ${fields} } } ... on Error { code message } } }`;
    const input = { id: "g1", name: "G1", protocol: "HTTPS", host: "192.0.2.1", port: 3080, user: "u", password: "pw" };
    const created = await gql(s.url, CREATE, { i: input });
    expect(created.errors).toBeUndefined();
    const gid = globalId("Compute", "g1");
    expect(created.data.createCompute.compute).toMatchObject({ id: gid, computeId: "g1", name: "G1", protocol: "HTTPS", port: 3080, user: "u", connected: false });
    expect((await call(s.url, "GET", "/v2/computes/g1")).body.protocol).toBe("https");
    // REST re-posting a known compute_id reconnects it; GraphQL refuses a taken id, as every create does.
    expect((await gql(s.url, CREATE, { i: input })).data.createCompute).toEqual({ __typename: "ConflictError", code: "ALREADY_EXISTS", message: "Compute ID g1 already exists" });

    const dup = await gql(s.url, `mutation { createCompute(input: { name: "G1", protocol: HTTP, host: "h", port: 1 }) { __typename ... on Error { code message } } }`);
    expect(dup.data.createCompute).toEqual({ __typename: "ConflictError", code: "ALREADY_EXISTS", message: 'Compute name "G1" already exists' });
    const badPort = await gql(s.url, `mutation { createCompute(input: { protocol: HTTP, host: "h", port: 0 }) { __typename } }`);
    expect(badPort.data.createCompute.__typename).toBe("InvalidInputError");

    const listed = await gql(
      s.url,
      `{ computes { totalCount edges { node { computeId } } } compute(id: "g1") { name } node(id: "${gid}") { ... on Compute { name } } }`,
    );
    expect(nodesOf(listed.data.computes).map((c: any) => c.computeId)).toEqual(["local", "g1"]);
    expect(listed.data.computes.totalCount).toBe(2);
    expect(listed.data.compute.name).toBe("G1");
    expect(listed.data.node).toEqual({ name: "G1" });
    const missing = await gql(s.url, `{ compute(id: "zz") { name } }`);
    expect([missing.errors, missing.data.compute]).toEqual([undefined, null]);

    const updated = await gql(s.url, `mutation { updateCompute(input: { id: "${gid}", port: 4000 }) { ... on UpdateComputePayload { compute { port name } } } }`);
    expect(updated.data.updateCompute.compute).toEqual({ port: 4000, name: "G1" });
    const DELETE = `deleteCompute(input: { id: "g1" }) { __typename ... on DeleteComputePayload { deletedIds } ... on Error { code } }`;
    const del = await gql(s.url, `mutation { a: ${DELETE} b: ${DELETE} }`);
    // Deleting what is not there is NOT_FOUND in GraphQL (REST's DELETE stays idempotent).
    expect(del.data).toEqual({ a: { __typename: "DeleteComputePayload", deletedIds: [gid] }, b: { __typename: "NotFoundError", code: "NOT_FOUND" } });
  });

  it("streams compute changes as typed events (subscription over SSE)", async () => {
    const abort = new AbortController();
    const before = s.ctx.bus.subscriberCount();
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: "subscription { computeEvents { kind compute { computeId name connected } } }" }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await busSubscribed(s, before);
    await call(s.url, "POST", "/v2/computes", { compute_id: "sse", name: "SSE", protocol: "http", host: "127.0.0.1", port: 9 });
    await call(s.url, "DELETE", "/v2/computes/sse");
    let text = "";
    while (!text.includes('"DELETED"')) text += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const events = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]).data?.computeEvents).filter(Boolean);
    expect(events[0]).toEqual({ kind: "CREATED", compute: { computeId: "sse", name: "SSE", connected: false } });
    expect(events.at(-1)).toEqual({ kind: "DELETED", compute: { computeId: "sse", name: "SSE", connected: false } });
  });

  it("never exposes a password field", async () => {
    const t = await gql(s.url, `{ __type(name: "Compute") { fields { name } } }`);
    expect(t.data.__type.fields.map((f: any) => f.name)).not.toContain("password");
    const q = await gql(s.url, `{ computes { edges { node { password } } } }`);
    expect(q.errors?.[0].message).toMatch(/Cannot query field "password"/);
  });
});
