import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import yazl from "yazl";
import { isAlive } from "../../src/emulation/runtime/processes.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { getBytes, postBytes, unzip, zip } from "./archive-support.js";
import { ndjsonStream } from "./nodes-support.js";

const C = "/v2/compute/projects";

describe("emulation: compute-level projects — lifecycle", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
  });

  const create = (body: Record<string, unknown>) => call(s.url, "POST", C, body);

  it("creates, returns the existing project for a known id, lists and gets", async () => {
    const id = randomUUID();
    const r = await create({ name: "cproj", project_id: id });
    expect(r.status).toBe(201);
    expect(r.headers.get("x-route")).toBe(C);
    expect(r.body).toEqual({ name: "cproj", project_id: id, variables: null });
    expect(r.text).toBe(`{\n    "name": "cproj",\n    "project_id": "${id}",\n    "variables": null\n}`);

    const again = await create({ name: "cproj", project_id: id });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ name: "cproj", project_id: id, variables: null });

    const list = await call(s.url, "GET", C);
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual({ name: "cproj", project_id: id, variables: null });

    const got = await call(s.url, "GET", `${C}/${id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("x-route")).toBe("/v2/compute/projects/{project_id}");
    expect(got.body).toEqual({ name: "cproj", project_id: id, variables: null });

    // It is this instance's project: the controller sees it, opened, in the same directory.
    const ctrl = await call(s.url, "GET", `/v2/projects/${id}`);
    expect(ctrl.body).toMatchObject({ name: "cproj", status: "opened", path: path.join(s.dataDir, "projects", id) });
    expect(fs.existsSync(path.join(s.dataDir, "projects", id, "cproj.gns3"))).toBe(true);
  });

  it("creates without an id (a new UUID) and with the controller's settings", async () => {
    const r = await create({ name: "no-id", variables: [{ name: "A", value: "1" }], auto_close: false });
    expect(r.status).toBe(201);
    expect(r.body.project_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.variables).toEqual([{ name: "A", value: "1" }]);
  });

  it("validates the body like the controller's create schema", async () => {
    const id = randomUUID();
    const r = await create({ project_id: id });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      message: `JSON schema error with API request '/v2/compute/projects' and JSON data '{'project_id': '${id}'}': 'name' is a required property`,
      method: "POST",
      path: "/v2/compute/projects",
      request: { project_id: id },
      status: 400,
    });
    expect((await create({ name: "x", project_id: "nope" })).status).toBe(400);
    expect((await create({ name: "x", bogus: 1 })).status).toBe(400);
  });

  it("refuses names with path separators (403)", async () => {
    for (const name of ["a/b", "a\\b"]) {
      const r = await create({ name, project_id: randomUUID() });
      expect(r.status).toBe(403);
      expect(r.body.status).toBe(403);
      expect(r.body.message).toContain("must not contain");
    }
  });

  it("a name another project already has is a 409, as on the controller", async () => {
    await create({ name: "taken", project_id: randomUUID() });
    const r = await create({ name: "taken", project_id: randomUUID() });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ message: 'Project "taken" already exists', status: 409 });
  });

  it("unknown id → 404, non-UUID → 400 with GNS3's message", async () => {
    const unknown = randomUUID();
    expect(await call(s.url, "GET", `${C}/${unknown}`)).toMatchObject({
      status: 404,
      body: { message: `Project ID ${unknown} doesn't exist`, status: 404 },
    });
    const bad = await call(s.url, "GET", `${C}/not-a-uuid`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      message: "Project ID not-a-uuid is not a valid UUID",
      method: "GET",
      path: "/v2/compute/projects/{project_id}",
      request: {},
      status: 400,
    });
    for (const [method, suffix] of [["PUT", ""], ["DELETE", ""], ["POST", "/close"]] as const) {
      expect((await call(s.url, method, `${C}/${unknown}${suffix}`, method === "PUT" ? {} : undefined)).status).toBe(404);
      expect((await call(s.url, method, `${C}/not-a-uuid${suffix}`, method === "PUT" ? {} : undefined)).status).toBe(400);
    }
  });

  it("PUT uses only variables, answers 200, and keeps variables when they are omitted", async () => {
    const id = randomUUID();
    await create({ name: "vars", project_id: id });
    const vars = [{ name: "V", value: "1" }];
    const r = await call(s.url, "PUT", `${C}/${id}`, { variables: vars });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: "vars", project_id: id, variables: vars });

    const before = (await call(s.url, "GET", `/v2/projects/${id}`)).body.auto_close;
    const untouched = await call(s.url, "PUT", `${C}/${id}`, { auto_close: !before });
    expect(untouched.status).toBe(200);
    expect(untouched.body.variables).toEqual(vars);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).body.auto_close).toBe(before);

    const cleared = await call(s.url, "PUT", `${C}/${id}`, { variables: null });
    expect(cleared.body.variables).toBeNull();
    expect((await call(s.url, "PUT", `${C}/${id}`, { variables: "x" })).status).toBe(400);
  });

  it("close → 204, then the compute forgets the project (404) and the row is closed", async () => {
    const id = randomUUID();
    await create({ name: "to-close", project_id: id });
    const r = await call(s.url, "POST", `${C}/${id}/close`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect((await call(s.url, "POST", `${C}/${id}/close`)).body).toEqual({ message: `Project ID ${id} doesn't exist`, status: 404 });
    expect((await call(s.url, "GET", `${C}/${id}`)).status).toBe(404);
    expect((await call(s.url, "GET", C)).body.map((p: { project_id: string }) => p.project_id)).not.toContain(id);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).body.status).toBe("closed");

    // Registering it again re-opens the same project.
    const again = await create({ name: "to-close", project_id: id });
    expect(again.status).toBe(201);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).body.status).toBe("opened");
  });

  it("delete → 204, removes the project, its nodes and directory; again → 404", async () => {
    const id = randomUUID();
    await create({ name: "to-delete", project_id: id });
    const node = await call(s.url, "POST", `/v2/projects/${id}/nodes`, { name: "hub", node_type: "ethernet_hub", compute_id: "local" });
    expect(node.status).toBe(201);
    const dir = path.join(s.dataDir, "projects", id);
    expect(fs.existsSync(dir)).toBe(true);

    const r = await call(s.url, "DELETE", `${C}/${id}`);
    expect(r.status).toBe(204);
    expect(fs.existsSync(dir)).toBe(false);
    expect(await s.ctx.db.node.count({ where: { projectId: id } })).toBe(0);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).status).toBe(404);
    expect((await call(s.url, "DELETE", `${C}/${id}`)).body).toEqual({ message: `Project ID ${id} doesn't exist`, status: 404 });
  });
});

/** Sends the path exactly as written: fetch/URL would normalise `..` away before it reaches the server. */
function rawRequest(base: string, method: string, rawPath: string, body?: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) };
    const req = http.request({ hostname, port, method, path: rawPath, headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const FORBIDDEN = { status: 403, body: JSON.stringify({ message: "403: Forbidden", status: 403 }, null, 4) };
const md5 = (data: string) => createHash("md5").update(data).digest("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A zip with one entry whose name yazl would refuse (`../…`): written under a same-length placeholder, then patched. */
async function zipSlip(evilName: string): Promise<Buffer> {
  const placeholder = "z".repeat(evilName.length);
  const z = new yazl.ZipFile();
  z.addBuffer(Buffer.from("pwned"), placeholder);
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  const buf = Buffer.concat(chunks);
  for (let at = buf.indexOf(placeholder); at >= 0; at = buf.indexOf(placeholder, at + 1)) buf.write(evilName, at, "latin1");
  return buf;
}

describe("emulation: compute-level projects — files, archives, streams", () => {
  let s: TestServer;
  let id: string;
  let P: string;
  let dir: string;
  let outside: string;
  let name: string;
  let projects = 0;
  beforeAll(async () => {
    s = await startTestServer();
    outside = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-outside-"));
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret");
  });
  // Each test gets its own compute project, with two symlinks leading out of it (escape/ and leak.txt).
  beforeEach(async () => {
    id = randomUUID();
    P = `${C}/${id}`;
    name = `files${++projects}`;
    expect((await call(s.url, "POST", C, { name, project_id: id })).status).toBe(201);
    dir = path.join(s.dataDir, "projects", id);
    fs.symlinkSync(outside, path.join(dir, "escape"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "leak.txt"));
  });
  /** The content the archive tests read: b.bin, dir/sub/a.txt, dir/c3725.ghost and the node hub1. */
  const fill = async () => {
    expect((await postBytes(s.url, `${P}/files/dir/sub/a.txt`, Buffer.from("content A"))).status).toBe(201);
    expect((await postBytes(s.url, `${P}/files/b.bin`, Buffer.from([0, 1, 2]))).status).toBe(201);
    expect((await postBytes(s.url, `${P}/files/dir/c3725.ghost`, Buffer.from("ghost"))).status).toBe(201);
    const node = await call(s.url, "POST", `/v2/projects/${id}/nodes`, { name: "hub1", node_type: "ethernet_hub", compute_id: "local" });
    expect(node.status).toBe(201);
  };
  afterAll(async () => {
    await s.close();
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it("POST file creates parent directories (201), GET serves it, the list has md5 sums and skips .ghost", async () => {
    const r = await postBytes(s.url, `${P}/files/dir/sub/a.txt`, Buffer.from("content A"));
    expect(r.status).toBe(201);
    expect(r.text).toBe("");
    await postBytes(s.url, `${P}/files/b.bin`, Buffer.from([0, 1, 2]));
    await postBytes(s.url, `${P}/files/dir/c3725.ghost`, Buffer.from("ghost"));

    const got = await call(s.url, "GET", `${P}/files/dir/sub/a.txt`);
    expect(got.status).toBe(200);
    expect(got.text).toBe("content A");
    expect(got.headers.get("content-type")).toBe("text/plain");
    expect(got.headers.get("content-length")).toBe("9");
    expect(got.headers.get("x-route")).toBe("/v2/compute/projects/{project_id}/files/{path:.+}");

    const list = await call(s.url, "GET", `${P}/files`);
    expect(list.status).toBe(200);
    const topology = fs.readFileSync(path.join(dir, `${name}.gns3`), "utf8");
    // Sorted by path; symlinks (escape, leak.txt) are not followed, .ghost files are skipped.
    expect(list.body).toEqual([
      { path: "b.bin", md5sum: createHash("md5").update(Buffer.from([0, 1, 2])).digest("hex") },
      { path: "dir/sub/a.txt", md5sum: md5("content A") },
      { path: `${name}.gns3`, md5sum: md5(topology) },
    ]);
    expect(list.body[1].md5sum).toBe("4f4e99c2da696a47de3b455758bff316"); // as in the reference transcript

    expect(await call(s.url, "GET", `${P}/files/nope`)).toMatchObject({ status: 404, body: { message: "404: Not Found", status: 404 } });
    const unknown = `${C}/${randomUUID()}`;
    expect((await call(s.url, "GET", `${unknown}/files`)).status).toBe(404);
    expect((await call(s.url, "GET", `${unknown}/files/a.txt`)).status).toBe(404);
    expect((await postBytes(s.url, `${unknown}/files/a.txt`, Buffer.from("x"))).status).toBe(404);
    expect((await call(s.url, "GET", `${C}/not-a-uuid/files`)).status).toBe(400);
  });

  it("refuses traversal, encoded traversal, absolute paths and symlinks leading out (403), for files and stream", async () => {
    for (const route of ["files", "stream"]) {
      for (const evil of ["../../../etc/passwd", "dir/../../x", "%2E%2E/%2E%2E/etc/passwd", "..%2F..%2Fetc%2Fpasswd", "/etc/passwd", "%2Fetc%2Fpasswd", "escape/secret.txt", "leak.txt"]) {
        expect(await rawRequest(s.url, "GET", `${P}/${route}/${evil}`), `${route}/${evil}`).toEqual(FORBIDDEN);
      }
    }
    for (const evil of ["../evil.txt", "%2E%2E%2Fevil.txt", "..%2Fevil.txt", "/tmp/patchbay-compute-evil.txt", "escape/planted.txt", "leak.txt"]) {
      expect(await rawRequest(s.url, "POST", `${P}/files/${evil}`, "x"), evil).toEqual(FORBIDDEN);
    }
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret");
    expect(fs.existsSync(path.join(outside, "planted.txt"))).toBe(false);
    expect(fs.existsSync("/tmp/patchbay-compute-evil.txt")).toBe(false);
    expect(fs.existsSync(path.join(s.dataDir, "projects", "evil.txt"))).toBe(false);
    // The stream route also refuses hidden files (a normalised path starting with "."), as GNS3 2.1 did.
    fs.writeFileSync(path.join(dir, ".hidden"), "h");
    expect(await rawRequest(s.url, "GET", `${P}/stream/.hidden`)).toEqual(FORBIDDEN);
    expect((await rawRequest(s.url, "GET", `${P}/stream/missing.pcap`)).status).toBe(404);
  });

  it("stream follows a file that grows while the client reads, until the client leaves", async () => {
    const capture = path.join(dir, "project-files", "captures", "cap.pcap");
    fs.mkdirSync(path.dirname(capture), { recursive: true });
    fs.writeFileSync(capture, "first;");
    const controller = new AbortController();
    const res = await fetch(`${s.url}${P}/stream/project-files/captures/cap.pcap`, { signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("transfer-encoding")).toBe("chunked");
    expect(res.headers.get("x-route")).toBe("/v2/compute/projects/{project_id}/stream/{path:.+}");
    let received = "";
    const reading = (async () => {
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) received += Buffer.from(chunk).toString();
      } catch {}
    })();
    const until = async (text: string) => {
      const deadline = Date.now() + 3000;
      while (received !== text) {
        if (Date.now() > deadline) throw new Error(`received ${JSON.stringify(received)}, waiting for ${JSON.stringify(text)}`);
        await sleep(20);
      }
    };
    await until("first;");
    fs.appendFileSync(capture, "second;");
    await until("first;second;");
    await sleep(300); // nothing new: the stream stays open and quiet
    fs.appendFileSync(capture, "third");
    await until("first;second;third");
    const opened = () =>
      fs.readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === capture;
        } catch {
          return false;
        }
      }).length;
    expect(opened()).toBe(1);
    controller.abort();
    await reading;
    // The server (this process) lets go of the file once the client has left.
    const deadline = Date.now() + 2000;
    while (opened() > 0 && Date.now() < deadline) await sleep(20);
    expect(opened()).toBe(0);
  });

  it("notifications: a working NDJSON stream of the project's events, ping first", async () => {
    const stream = ndjsonStream(`${s.url}${P}/notifications`);
    const res = await stream.ready;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-route")).toBe("/v2/compute/projects/{project_id}/notifications");
    const [ping] = await stream.take(1);
    expect(JSON.parse(ping)).toMatchObject({ action: "ping", event: { cpu_usage_percent: expect.any(Number) } });
    const node = await call(s.url, "POST", `/v2/projects/${id}/nodes`, { name: "hub1", node_type: "ethernet_hub", compute_id: "local" });
    const [, created] = await stream.take(2);
    stream.close();
    expect(JSON.parse(created)).toEqual({ action: "node.created", event: node.body });
    expect((await call(s.url, "GET", `${C}/${randomUUID()}/notifications`)).status).toBe(404);
    // Leaving the compute stream does not count as an auto_close listener of the controller's project.
    await sleep(100);
    expect((await call(s.url, "GET", `/v2/projects/${id}`)).body.status).toBe("opened");
  });

  it("export streams a .gns3project zip (include_images=0/1), refuses other flag values", async () => {
    await fill();
    const r = await getBytes(s.url, `${P}/export?include_images=1`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/gns3project");
    expect(r.headers.get("content-disposition")).toBe(`attachment; filename="${name}.gns3project"`);
    const entries = await unzip(r.body);
    const names = entries.map((e) => e.name);
    expect(names[0]).toBe("project.gns3");
    expect(names).toEqual(expect.arrayContaining(["b.bin", "dir/sub/a.txt", "dir/c3725.ghost"]));
    expect(names).not.toContain(`${name}.gns3`);
    expect(names.some((n) => n.startsWith("project-files/captures"))).toBe(false);
    expect(names.some((n) => n.includes("secret"))).toBe(false); // symlinks are not followed
    const doc = JSON.parse(entries[0].data.toString());
    expect(doc).toMatchObject({ project_id: id, name });
    expect(doc.topology.nodes.map((n: { name: string }) => n.name)).toContain("hub1");

    expect((await getBytes(s.url, `${P}/export`)).status).toBe(200);
    expect((await getBytes(s.url, `${P}/export?include_images=0`)).status).toBe(200);
    expect((await call(s.url, "GET", `${P}/export?include_images=yes`)).status).toBe(400);
    expect((await call(s.url, "GET", `${C}/${randomUUID()}/export`)).status).toBe(404);
  });

  it("import into a known project writes the archive's files (200 + compute project)", async () => {
    await fill();
    const archive = await zip({ "project.gns3": "{}", "imported/x.txt": "from zip", "b.bin": "replaced" });
    const r = await postBytes(s.url, `${P}/import`, archive);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name, project_id: id, variables: null });
    expect(fs.readFileSync(path.join(dir, "imported", "x.txt"), "utf8")).toBe("from zip");
    expect(fs.readFileSync(path.join(dir, "b.bin"), "utf8")).toBe("replaced");
    expect(fs.existsSync(path.join(dir, "project.gns3"))).toBe(false);
    // The topology stays the database's.
    expect((await call(s.url, "GET", `/v2/projects/${id}/nodes`)).body.map((n: { name: string }) => n.name)).toEqual(["hub1"]);
  });

  it("import of an unknown project creates it from the archive, opened; export → import round-trips", async () => {
    await fill();
    const exported = (await getBytes(s.url, `${P}/export`)).body;
    const copy = randomUUID();
    const r = await postBytes(s.url, `${C}/${copy}/import`, exported);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: `${name}-1`, project_id: copy, variables: null });
    expect((await call(s.url, "GET", `${C}/${copy}`)).status).toBe(200);
    expect((await call(s.url, "GET", `/v2/projects/${copy}`)).body.status).toBe("opened");
    expect(fs.readFileSync(path.join(s.dataDir, "projects", copy, "dir", "sub", "a.txt"), "utf8")).toBe("content A");
    expect((await call(s.url, "GET", `/v2/projects/${copy}/nodes`)).body.map((n: { name: string }) => n.name)).toEqual(["hub1"]);
  });

  it("import refuses zip-slip entries (409) and writes nothing; bad ids and non-zips are refused", async () => {
    for (const evil of ["../slipped.txt", "../../slipped.txt", "/tmp/patchbay-slip.txt"]) {
      const r = await postBytes(s.url, `${P}/import`, await zipSlip(evil));
      expect(r.status, evil).toBe(409);
      expect(r.body.message).toContain("unsafe archive entry");
    }
    // A symlink already in the project directory cannot carry an entry out either.
    const viaLink = await postBytes(s.url, `${P}/import`, await zip({ "escape/planted.txt": "x" }));
    expect(viaLink.status).toBe(409);
    expect(fs.existsSync(path.join(outside, "planted.txt"))).toBe(false);
    expect(fs.existsSync(path.join(s.dataDir, "projects", "slipped.txt"))).toBe(false);
    expect(fs.existsSync("/tmp/patchbay-slip.txt")).toBe(false);
    const unknown = randomUUID();
    expect((await postBytes(s.url, `${C}/${unknown}/import`, await zipSlip("../slipped.txt"))).status).toBe(409);
    expect((await call(s.url, "GET", `/v2/projects/${unknown}`)).status).toBe(404);

    expect((await postBytes(s.url, `${P}/import`, Buffer.from("not a zip"))).status).toBe(409);
    expect((await postBytes(s.url, `${C}/not-a-uuid/import`, Buffer.from("x"))).status).toBe(400);
  });
});

describe("emulation: compute notification WebSocket", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it("pings every second with cpu/memory and carries every project event with a top-level project_id", async () => {
    const ws = new WebSocket(`${s.url.replace(/^http/, "ws")}/v2/compute/notifications/ws`);
    const frames: string[] = [];
    ws.on("message", (data) => frames.push(String(data)));
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const waitFor = async (pred: (m: any) => boolean, ms = 4000) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const hit = frames.map((f) => JSON.parse(f)).find(pred);
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`timeout; frames: ${frames.join("\n")}`);
        await sleep(20);
      }
    };
    await waitFor(() => frames.length >= 1);
    expect(frames[0]).toMatch(/^\{"action": "ping", "event": \{"cpu_usage_percent": [\d.]+, "memory_usage_percent": [\d.]+\}\}$/);
    const started = Date.now();
    await waitFor(() => frames.length >= 3, 3500);
    expect(Date.now() - started).toBeLessThan(3000); // two more pings within ~2 s: the compute's 1-s rhythm
    expect(frames.slice(0, 3).every((f) => JSON.parse(f).action === "ping")).toBe(true);

    const id = randomUUID();
    await call(s.url, "POST", C, { name: "ws", project_id: id });
    const node = await call(s.url, "POST", `/v2/projects/${id}/nodes`, { name: "sw", node_type: "ethernet_switch", compute_id: "local" });
    const msg = await waitFor((m) => m.action === "node.created");
    expect(msg).toEqual({ action: "node.created", event: node.body, project_id: id });
    ws.close();
  });
});

describe.skipIf(findVpcs() === null)("emulation: compute close and delete release runtime resources", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  /** A compute project with a started vpcs linked to a hub; returns its pids. */
  async function running(name: string) {
    const id = randomUUID();
    await call(s.url, "POST", C, { name, project_id: id });
    const Pn = `/v2/projects/${id}`;
    const pc = (await call(s.url, "POST", `${Pn}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body.node_id;
    const hub = (await call(s.url, "POST", `${Pn}/nodes`, { name: "HUB1", node_type: "ethernet_hub", compute_id: "local" })).body.node_id;
    const nodes = [
      { node_id: pc, adapter_number: 0, port_number: 0 },
      { node_id: hub, adapter_number: 0, port_number: 0 },
    ];
    expect((await call(s.url, "POST", `${Pn}/links`, { nodes })).status).toBe(201);
    expect((await call(s.url, "POST", `${Pn}/nodes/${pc}/start`)).status).toBe(200);
    const compute = s.ctx.services.emulation.runtime;
    const pids = compute.snapshot().processes.flatMap((p) => p.pids);
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.every(isAlive)).toBe(true);
    return { id, pc, pids, compute };
  }

  it("close stops the project's processes and links before answering 204", async () => {
    const { id, pc, pids, compute } = await running("rt-close");
    expect((await call(s.url, "POST", `${C}/${id}/close`)).status).toBe(204);
    expect(pids.some(isAlive)).toBe(false);
    expect(compute.snapshot().processes).toEqual([]);
    expect(compute.snapshot().links).toEqual([]);
    expect((await s.ctx.db.node.findUnique({ where: { id: pc } }))?.status).toBe("stopped");
  });

  it("delete stops them too, then removes the project", async () => {
    const { id, pids, compute } = await running("rt-delete");
    expect((await call(s.url, "DELETE", `${C}/${id}`)).status).toBe(204);
    expect(pids.some(isAlive)).toBe(false);
    expect(compute.snapshot().processes).toEqual([]);
    expect(compute.snapshot().udpPorts).toEqual([]);
  });
});
