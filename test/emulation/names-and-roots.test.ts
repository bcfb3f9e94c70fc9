import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { getBytes, postBytes } from "./archive-support.js";

/** Issue 8, items 2, 3, 8, 9 and 11: names are names, local mode is opt-in and confined, file names are plain. */

const names = async (s: TestServer) => (await call(s.url, "GET", "/v2/projects")).body.map((p: { name: string }) => p.name);

/**
 * Every file under `dir` whose path contains `needle` (where an escaped write would land). Walked by hand: `dir` may
 * be the shared temp directory, where other processes remove their directories while the walk is in them.
 */
function findFiles(dir: string, needle: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "EACCES") return [];
    throw e;
  }
  return entries.flatMap((e) => {
    const p = path.join(dir, e.name);
    return [...(p.includes(needle) ? [p] : []), ...(e.isDirectory() ? findFiles(p, needle) : [])];
  });
}

describe.each([false, true])("project names are never paths (local mode %s)", (local) => {
  let s: TestServer;
  let sourceId: string;
  let exported: Buffer;
  beforeAll(async () => {
    s = await startTestServer({ local });
    sourceId = (await call(s.url, "POST", "/v2/projects", { name: "source" })).body.project_id;
    exported = (await getBytes(s.url, `/v2/projects/${sourceId}/export`)).body;
  });
  afterAll(() => s.close());

  const separator = (name: string) => ({ status: 403, body: { message: `Project name ${name} must not contain / or \\`, status: 403 } });

  it("refuses a name with a separator on create, rename, duplicate and import (403) and writes nothing", async () => {
    const before = await names(s); // "source", and whatever the other tests of this server created
    expect(before).toContain("source");
    const escape = "../../../outside/pwned";
    expect(await call(s.url, "POST", "/v2/projects", { name: escape })).toMatchObject(separator(escape));
    expect(await call(s.url, "POST", "/v2/projects", { name: "a\\b" })).toMatchObject(separator("a\\b"));
    expect(await call(s.url, "PUT", `/v2/projects/${sourceId}`, { name: "x/y" })).toMatchObject(separator("x/y"));
    expect(await call(s.url, "POST", `/v2/projects/${sourceId}/duplicate`, { name: "a/b\\c" })).toMatchObject(separator("a/b\\c"));
    const imported = await postBytes(s.url, `/v2/projects/${crypto.randomUUID()}/import?name=${encodeURIComponent(escape)}`, exported);
    expect(imported).toMatchObject(separator(escape));
    const created = await gql(s.url, `mutation($n: String!) { createProject(input: { name: $n }) { __typename ... on Error { message } } }`, { n: escape });
    expect(created.data.createProject).toEqual({ __typename: "ForbiddenError", message: `Project name ${escape} must not contain / or \\` });

    expect(await names(s)).toEqual(before);
    expect(findFiles(path.dirname(s.dataDir), "pwned")).toEqual([]);
  });

  it("refuses control characters in every kind of name with GNS3's 400 (both databases alike)", async () => {
    const before = await names(s); // "source", and whatever the other tests of this server created
    expect(before).toContain("source");
    for (const name of ["p\u0000n", "p\nn", "tab\there", "del\u007f"]) {
      const r = await call(s.url, "POST", "/v2/projects", { name });
      expect(r).toMatchObject({ status: 400, body: { message: "Project name must not contain control characters", status: 400, method: "POST", path: "/v2/projects" } });
    }
    const P = `/v2/projects/${sourceId}`;
    expect((await call(s.url, "POST", `${P}/snapshots`, { name: "s\u0000" })).status).toBe(400);
    expect((await call(s.url, "POST", `${P}/nodes`, { name: "PC\u0000", node_type: "ethernet_hub", compute_id: "local" })).status).toBe(400);
    const hub = await call(s.url, "POST", `${P}/nodes`, { name: "HUB", node_type: "ethernet_hub", compute_id: "local" });
    expect((await call(s.url, "PUT", `${P}/nodes/${hub.body.node_id}`, { name: "H\u0001" })).status).toBe(400);
    expect((await call(s.url, "POST", "/v2/computes", { name: "c\u0000", protocol: "http", host: "127.0.0.1", port: 9 })).status).toBe(400);
    const viaGraphql = await gql(s.url, `mutation($n: String!) { createProject(input: { name: $n }) { __typename } }`, { n: "pn\u0000" });
    expect(viaGraphql.data.createProject.__typename).toBe("InvalidInputError");
    expect(await names(s)).toEqual(before);
    expect((await call(s.url, "GET", `${P}/nodes`)).body.map((n: { name: string }) => n.name)).toEqual(["HUB"]);
  });

  it("answers a 900 KB name with 400, and keeps names that are only unusual (Unicode, quotes, dots)", async () => {
    const huge = "n".repeat(900 * 1024);
    expect((await call(s.url, "POST", "/v2/projects", { name: huge })).status).toBe(400);
    expect((await call(s.url, "POST", `/v2/projects/${sourceId}/duplicate`, { name: huge })).status).toBe(400);
    expect((await call(s.url, "POST", `/v2/projects/${sourceId}/snapshots`, { name: huge })).status).toBe(400);

    for (const name of ['Réseau "lab" 日本', "..", ".hidden"]) {
      const r = await call(s.url, "POST", "/v2/projects", { name });
      expect(r.status).toBe(201);
      expect(r.body.filename).toBe(`${name}.gns3`);
      expect(fs.existsSync(path.join(s.dataDir, "projects", r.body.project_id, `${name}.gns3`))).toBe(true);
      const exportOf = await getBytes(s.url, `/v2/projects/${r.body.project_id}/export`);
      expect(exportOf.status).toBe(200);
      const disposition = exportOf.headers.get("content-disposition");
      if (/^[\x20-\x7e]*$/.test(name) && !name.includes('"')) expect(disposition).toBe(`attachment; filename="${name}.gns3project"`);
      else expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent(`${name}.gns3project`)}`);
      expect((await call(s.url, "POST", `/v2/projects/${r.body.project_id}/snapshots`, { name })).status).toBe(201);
    }
  });
});

describe("local mode is off by default", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());

  it("says so, and keeps project paths and loads to itself", async () => {
    expect((await call(s.url, "GET", "/v2/version")).body.local).toBe(false);
    expect(await call(s.url, "POST", "/v2/projects", { name: "etc", path: "/etc" })).toMatchObject({
      status: 403,
      body: { message: "The path is not allowed", status: 403 },
    });
    const load = await call(s.url, "POST", "/v2/projects/load", { path: "/etc/passwd" });
    expect(load.status).toBe(403);
    expect(load.text).toBe("");
    expect((await call(s.url, "POST", "/v2/shutdown")).status).toBe(403);
  });
});

describe("local mode stays inside the allowed roots", () => {
  let s: TestServer;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-allowed-"));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-outside-"));
  beforeAll(async () => {
    s = await startTestServer({ local: true, allowedRoots: [root] });
    // A link inside an allowed root that leads out of it.
    fs.symlinkSync(outside, path.join(root, "link-out"));
    fs.mkdirSync(path.join(s.dataDir, "projects"), { recursive: true });
    fs.symlinkSync("/etc", path.join(s.dataDir, "projects", "etc-link"));
  });
  afterAll(() => s.close());

  it("refuses /etc, paths outside the roots and symlinks leading out; accepts a directory inside a root", async () => {
    const notAllowed = { status: 403, body: { message: "The path is not allowed", status: 403 } };
    expect(await call(s.url, "POST", "/v2/projects", { name: "etc", path: "/etc" })).toMatchObject(notAllowed);
    expect(await call(s.url, "POST", "/v2/projects", { name: "out", path: path.join(outside, "p") })).toMatchObject(notAllowed);
    expect(await call(s.url, "POST", "/v2/projects", { name: "via-link", path: path.join(root, "link-out", "p") })).toMatchObject(notAllowed);
    expect(await call(s.url, "POST", "/v2/projects", { name: "via-etc", path: path.join(s.dataDir, "projects", "etc-link", "p") })).toMatchObject(notAllowed);
    expect(await call(s.url, "POST", "/v2/projects", { name: "root-itself", path: root })).toMatchObject(notAllowed);
    expect(fs.readdirSync(outside)).toEqual([]);

    const inside = path.join(root, "labs", "lab1");
    const r = await call(s.url, "POST", "/v2/projects", { name: "lab1", path: inside });
    expect(r.status).toBe(201);
    expect(r.body.path).toBe(inside);
    expect(fs.existsSync(path.join(inside, "lab1.gns3"))).toBe(true);

    const P = `/v2/projects/${r.body.project_id}`;
    expect(await call(s.url, "POST", `${P}/duplicate`, { name: "copy", path: path.join(outside, "copy") })).toMatchObject(notAllowed);
    const zip = (await getBytes(s.url, `${P}/export`)).body;
    const imported = await postBytes(s.url, `/v2/projects/${crypto.randomUUID()}/import?path=${encodeURIComponent(path.join(outside, "imp"))}`, zip);
    expect(imported).toMatchObject(notAllowed);
    const dup = await call(s.url, "POST", `${P}/duplicate`, { name: "copy", path: path.join(root, "copy") });
    expect(dup).toMatchObject({ status: 201, body: { path: path.join(root, "copy") } });
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("loads only from the roots, and never echoes the file's content in an error", async () => {
    const load = (p: string) => call(s.url, "POST", "/v2/projects/load", { path: p });
    for (const p of ["/etc/passwd", path.join(root, "link-out", "x.gns3"), path.join(s.dataDir, "projects", "etc-link", "passwd")]) {
      const r = await load(p);
      expect(r).toMatchObject({ status: 403, body: { message: "The path is not allowed" } });
      expect(r.text).not.toContain("root:");
    }
    const secret = "root:x:0:0:TOP-SECRET-CONTENT:/root:/bin/bash\n";
    fs.writeFileSync(path.join(root, "not-json.gns3"), secret);
    const bad = await load(path.join(root, "not-json.gns3"));
    expect(bad).toMatchObject({ status: 409, body: { message: `Could not load topology ${path.join(root, "not-json.gns3")}: the file is not valid JSON` } });
    expect(bad.text).not.toMatch(/root:|TOP-SECRET/);
    fs.mkdirSync(path.join(root, "labs"), { recursive: true });
    const dir = await load(path.join(root, "labs"));
    expect(dir).toMatchObject({ status: 409, body: { message: `Could not load topology ${path.join(root, "labs")}: not a regular file` } });
    const polluted = path.join(root, "polluted.gns3");
    fs.writeFileSync(polluted, '{"__proto__": {"polluted": true}, "topology": {}}');
    expect(await load(polluted)).toMatchObject({ status: 409, body: { message: `Could not load topology ${polluted}: Forbidden key "__proto__" in JSON` } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("file names on every files route are plain (no backslash, no control character)", () => {
  let s: TestServer;
  let P: string;
  let nodeId: string;
  beforeAll(async () => {
    s = await startTestServer();
    P = `/v2/projects/${(await call(s.url, "POST", "/v2/projects", { name: "files" })).body.project_id}`;
    nodeId = (await call(s.url, "POST", `${P}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body.node_id;
  });
  afterAll(() => s.close());

  it("refuses them with 403 on project, compute project and node files, and export, snapshot and duplicate keep working", async () => {
    const forbidden = { status: 403, body: { message: "403: Forbidden", status: 403 } };
    const compute = P.replace("/v2/projects", "/v2/compute/projects");
    for (const name of ["..%5cx.txt", "a%5cb.txt", "line%0Abreak.txt", "nul%00.txt", "esc%1b.txt"]) {
      expect(await call(s.url, "POST", `${P}/files/${name}`, "x")).toMatchObject(forbidden);
      expect(await call(s.url, "GET", `${P}/files/${name}`)).toMatchObject(forbidden);
      expect(await call(s.url, "POST", `${compute}/files/${name}`, "x")).toMatchObject(forbidden);
    }
    // Node files follow GNS3: a backslash is a separator there, so ..\x is the refused ../x.
    expect((await call(s.url, "POST", `${P}/nodes/${nodeId}/files/..%5cx.txt`, "x")).status).toBe(403);
    expect((await call(s.url, "POST", `${P}/nodes/${nodeId}/files/ok%0A.txt`, "x")).status).toBe(403);
    expect((await call(s.url, "POST", `${P}/files/plain.txt`, "x")).status).toBe(201);

    expect((await getBytes(s.url, `${P}/export`)).status).toBe(200);
    expect((await call(s.url, "POST", `${P}/snapshots`, { name: "after" })).status).toBe(201);
    expect((await call(s.url, "POST", `${P}/duplicate`, { name: "files-copy" })).status).toBe(201);
  });

  it("answers a NUL or other odd emulator on the compute image and forwarding routes with 404, not 500", async () => {
    for (const url of ["/v2/computes/local/%00/images", "/v2/computes/local/%00/x", "/v2/computes/local/a%20b/images", "/v2/computes/local/qemu/%00"]) {
      const r = await call(s.url, "GET", url);
      expect(r.status, url).toBe(404);
    }
  });
});
