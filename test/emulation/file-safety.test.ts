import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import yazl from "yazl";
import { resolveInside } from "../../src/emulation/files/safe-path.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { postBytes, topology, zipWith } from "./archive-support.js";

/** Sends the path exactly as written: fetch/URL would normalise `..` away before it reaches the server. */
function rawRequest(base: string, method: string, rawPath: string, body?: string | Buffer): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, method, path: rawPath, headers: body ? { "content-length": Buffer.byteLength(body) } : {} }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("one door to the disk: project files", () => {
  let s: TestServer;
  let P: string;
  let dir: string;
  let outside: string;
  beforeAll(async () => {
    s = await startTestServer();
    const { body } = await call(s.url, "POST", "/v2/projects", { name: "safety" });
    P = `/v2/projects/${body.project_id}`;
    dir = body.path;
    outside = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-outside-"));
    fs.writeFileSync(path.join(outside, "secret.txt"), "top secret");
    fs.symlinkSync(outside, path.join(dir, "escape"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "leak.txt"));
    fs.symlinkSync(path.join(outside, "not-yet.txt"), path.join(dir, "dangling.txt"));
    fs.mkdirSync(path.join(dir, "sub"));
    fs.writeFileSync(path.join(dir, "sub", "ok.txt"), "fine");
    fs.symlinkSync(path.join(dir, "sub"), path.join(dir, "inner"));
  });
  afterAll(async () => {
    await s.close();
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const forbidden = { status: 403, body: JSON.stringify({ message: "403: Forbidden", status: 403 }, null, 4) };

  it("refuses raw ../ traversal on GET and POST and writes nothing outside", async () => {
    expect(await rawRequest(s.url, "GET", `${P}/files/../../../etc/passwd`)).toEqual(forbidden);
    expect(await rawRequest(s.url, "GET", `${P}/files/sub/../../x`)).toEqual(forbidden);
    expect(await rawRequest(s.url, "POST", `${P}/files/../evil.txt`, "x")).toEqual(forbidden);
    expect(fs.existsSync(path.join(dir, "..", "evil.txt"))).toBe(false);
  });

  it("refuses encoded traversal (%2E%2E, ..%2F) and absolute paths (//etc/passwd)", async () => {
    expect(await rawRequest(s.url, "GET", `${P}/files/%2E%2E/%2E%2E/etc/passwd`)).toEqual(forbidden);
    expect(await rawRequest(s.url, "GET", `${P}/files/..%2F..%2F..%2Fetc%2Fpasswd`)).toEqual(forbidden);
    expect(await rawRequest(s.url, "GET", `${P}/files//etc/passwd`)).toEqual(forbidden);
    expect(await rawRequest(s.url, "POST", `${P}/files/%2E%2E%2Fevil2.txt`, "x")).toEqual(forbidden);
    expect(await rawRequest(s.url, "POST", `${P}/files//tmp/patchbay-evil.txt`, "x")).toEqual(forbidden);
    expect(fs.existsSync(path.join(dir, "..", "evil2.txt"))).toBe(false);
    expect(fs.existsSync("/tmp/patchbay-evil.txt")).toBe(false);
  });

  it("refuses the project directory itself and NUL bytes", async () => {
    expect((await rawRequest(s.url, "GET", `${P}/files/.`)).status).toBe(403);
    expect((await rawRequest(s.url, "GET", `${P}/files/sub/..`)).status).toBe(403);
    expect((await rawRequest(s.url, "GET", `${P}/files/a%00b`)).status).toBe(403);
  });

  it("follows symlinks: a link inside pointing outside is refused, for reads and for new files", async () => {
    expect(await rawRequest(s.url, "GET", `${P}/files/escape/secret.txt`)).toEqual(forbidden);
    expect(await rawRequest(s.url, "GET", `${P}/files/leak.txt`)).toEqual(forbidden);
    expect(await rawRequest(s.url, "POST", `${P}/files/escape/planted.txt`, "x")).toEqual(forbidden);
    expect(await rawRequest(s.url, "POST", `${P}/files/leak.txt`, "overwritten")).toEqual(forbidden);
    expect(await rawRequest(s.url, "POST", `${P}/files/dangling.txt`, "x")).toEqual(forbidden);
    expect(fs.existsSync(path.join(outside, "planted.txt"))).toBe(false);
    expect(fs.existsSync(path.join(outside, "not-yet.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("top secret");
  });

  it("allows symlinks that stay inside the project", async () => {
    const r = await rawRequest(s.url, "GET", `${P}/files/inner/ok.txt`);
    expect(r).toEqual({ status: 200, body: "fine" });
    expect((await rawRequest(s.url, "POST", `${P}/files/inner/new.txt`, "n")).status).toBe(201);
    expect(fs.readFileSync(path.join(dir, "sub", "new.txt"), "utf8")).toBe("n");
  });

  it("resolveInside: strict containment after realpath, names that merely start with dots are fine", async () => {
    await expect(resolveInside(dir, "..data")).resolves.toBe(path.join(fs.realpathSync(dir), "..data"));
    await expect(resolveInside(dir, "sub/./ok.txt")).resolves.toBe(path.join(fs.realpathSync(dir), "sub", "ok.txt"));
    await expect(resolveInside(dir, "a/b/../../..")).rejects.toThrow("403: Forbidden");
    await expect(resolveInside(dir, "escape")).rejects.toThrow("403: Forbidden");
    await expect(resolveInside(dir, "escape/deeper/missing.txt")).rejects.toThrow("403: Forbidden");
  });
});

describe("one door to the disk: zip import", () => {
  let s: TestServer;
  let projectsDir: string;
  beforeAll(async () => {
    s = await startTestServer();
    projectsDir = path.join(s.dataDir, "projects");
  });
  afterAll(() => s.close());

  const importZip = (id: string, zip: Buffer) => postBytes(s.url, `/v2/projects/${id}/import`, zip);

  const cases: [string, { name: string; placeholder?: string; mode?: number }][] = [
    ["../ entry", { name: "../evil.txt", placeholder: "AA/evil.txt" }],
    ["nested ../ entry", { name: "project-files/../../evil.txt", placeholder: "project-files/AA/AA/evil.txt" }],
    ["absolute entry", { name: "/tmp/pbevil.txt", placeholder: "Xtmp/pbevil.txt" }],
    ["backslash entry", { name: "..\\evil.txt", placeholder: "AAAevil.txt" }],
    ["drive-letter entry", { name: "C:/evil.txt", placeholder: "CC/evil.txt" }],
    ["symlink entry", { name: "link", mode: 0o120777 }],
  ];
  for (const [what, entry] of cases) {
    it(`rejects a ${what} with 409 and writes nothing`, async () => {
      const id = "a1b2c3d4-0000-4000-8000-00000000000" + cases.findIndex(([w]) => w === what);
      const zip = await zipWith([{ name: "ok.txt" }, entry]);
      const r = await importZip(id, zip);
      expect(r.status).toBe(409);
      expect(r.body.message).toMatch(/^Cannot import project, unsafe archive entry/);
      expect(fs.existsSync(path.join(s.dataDir, "evil.txt"))).toBe(false);
      expect(fs.existsSync(path.join(projectsDir, "evil.txt"))).toBe(false);
      expect(fs.existsSync("/tmp/pbevil.txt")).toBe(false);
      expect(fs.existsSync(path.join(projectsDir, id))).toBe(false);
      expect((fs.existsSync(projectsDir) ? fs.readdirSync(projectsDir) : []).filter((n) => n.startsWith(".import-"))).toEqual([]);
      expect((await call(s.url, "GET", `/v2/projects/${id}`)).status).toBe(404);
    });
  }

  it("refuses ids that would name a directory outside: project id in the URL, ids inside project.gns3", async () => {
    const plain = await zipWith([{ name: "ok.txt" }]);
    const target = `escaped-${path.basename(s.dataDir)}`; // unique: /tmp is shared with other runs
    const r = await rawRequest(s.url, "POST", `/v2/projects/..%2F..%2F${target}/import`, plain);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).message).toBe(`Project ID ../../${target} is not a valid UUID`);
    expect(fs.existsSync(path.join(s.dataDir, "..", target))).toBe(false);
    expect(fs.existsSync(path.join(s.dataDir, target))).toBe(false);

    const evilNode = { ...topology("nodes"), topology: { nodes: [{ node_id: "../../../escaped", node_type: "vpcs", name: "PC1" }], links: [], drawings: [], computes: [] } };
    const z = new yazl.ZipFile();
    z.addBuffer(Buffer.from(JSON.stringify({ ...evilNode, project_id: "a1b2c3d4-0000-4000-8000-0000000000aa" })), "project.gns3");
    z.end();
    const chunks: Buffer[] = [];
    for await (const c of z.outputStream) chunks.push(c as Buffer);
    // Same id as the URL: ids would be kept, so they must be safe.
    const kept = await importZip("a1b2c3d4-0000-4000-8000-0000000000aa", Buffer.concat(chunks));
    expect(kept.status).toBe(409);
    expect(kept.body.message).toMatch(/node_id/);

    const created = await call(s.url, "POST", "/v2/projects", { name: "x", project_id: "../../escaped-too" });
    expect(created.status).toBe(400);
  });

  it("accepts the same archive without the unsafe entry", async () => {
    const id = "a1b2c3d4-0000-4000-8000-0000000000ff";
    const r = await importZip(id, await zipWith([{ name: "ok.txt", data: "safe" }]));
    expect(r.status).toBe(201);
    expect(fs.readFileSync(path.join(projectsDir, id, "ok.txt"), "utf8")).toBe("safe");
  });
});
