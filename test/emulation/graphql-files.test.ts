import { randomUUID } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { followPcap, icmpEchoes } from "../support/lab.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";
import { unzip, zipWith } from "./archive-support.js";

/**
 * Files and archives over GraphQL, with HTTP Basic authentication on: uploads are real multipart requests (the
 * GraphQL multipart request convention: `operations`, `map`, file parts), downloads go through the signed URLs
 * the fields return, fetched without credentials.
 */
const AUTH = { authorization: `Basic ${Buffer.from("admin:secret").toString("base64")}` };
/** A header no HTML form can send: multipart (and other form) POSTs need one (cross-site request forgery). */
const PREFLIGHT = { "graphql-preflight": "1" };
const UPLOAD_LIMIT = 8 * 1024 * 1024;

let s: TestServer;
beforeAll(async () => void (s = await startTestServer({ auth: { user: "admin", password: "secret" }, uploadLimit: "8mb" })));
afterAll(() => s?.close());

const query = (q: string, variables?: Record<string, unknown>) => gql(s.url, q, variables, AUTH);
const rest = (method: string, url: string, body?: unknown) => call(s.url, method, url, body, AUTH);

/** One multipart GraphQL request whose variable `file` is the uploaded file. */
async function upload(q: string, variables: Record<string, unknown>, file: { name: string; data: Buffer | string }) {
  const form = new FormData();
  form.set("operations", JSON.stringify({ query: q, variables: { ...variables, file: null } }));
  form.set("map", JSON.stringify({ 0: ["variables.file"] }));
  form.set("0", new Blob([typeof file.data === "string" ? file.data : new Uint8Array(file.data)]), file.name);
  const res = await fetch(`${s.url}/graphql`, { method: "POST", headers: { ...AUTH, ...PREFLIGHT }, body: form });
  return { status: res.status, body: (await res.json()) as { data?: any; errors?: { message: string; extensions?: any }[] } };
}

/** A signed URL fetched as a client would: no credentials. */
async function download(url: string, init: RequestInit = {}) {
  const res = await fetch(s.url + url, init);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

const json = (b: Buffer) => JSON.parse(b.toString("utf8"));

async function newProject(name = `files-${randomUUID().slice(0, 8)}`): Promise<string> {
  const r = await query(`mutation($n: String!) { createProject(input: { name: $n, autoClose: false }) {
    ... on CreateProjectPayload { project { projectId } } } }`, { n: name });
  return r.data.createProject.project.projectId;
}

const WRITE_PROJECT_FILE = `mutation($p: ID!, $path: String!, $file: File!) {
  writeProjectFile(input: { projectId: $p, path: $path, file: $file }) {
    __typename ... on WriteProjectFilePayload { file { path sizeBytes } } ... on Error { message code target } } }`;
/** Writes a node file and asks, in the same answer, for the URL that downloads it. */
const WRITE_NODE_FILE = `mutation($n: ID!, $path: String!, $file: File!) {
  writeNodeFile(input: { nodeId: $n, path: $path, file: $file }) {
    __typename ... on WriteNodeFilePayload { file { path sizeBytes } node { nodeId fileUrl(path: $path) { ... on DownloadUrl { url } } } }
    ... on Error { code message } } }`;
const IMPORT = `mutation($id: ID, $name: String, $path: String, $file: File!) {
  importProject(input: { id: $id, name: $name, path: $path, file: $file }) {
    __typename ... on ImportProjectPayload { project { projectId name status nodes { edges { node { name } } } } } ... on Error { message } } }`;

const IMPORT_CODE = `mutation($id: ID, $file: File!) { importProject(input: { id: $id, file: $file }) { __typename ... on Error { code message } } }`;

async function exportUrl(projectId: string, args = "") {
  const r = await query(`query($id: ID!) { project(id: $id) { exportUrl${args} {
    __typename ... on DownloadUrl { url expiresAt } ... on Error { message } } } }`, { id: projectId });
  return r.data.project.exportUrl;
}

async function projectFileUrl(projectId: string, file: string) {
  const r = await query(`query($id: ID!, $path: String!) { project(id: $id) { fileUrl(path: $path) {
    __typename ... on DownloadUrl { url expiresAt } ... on Error { message } } } }`, { id: projectId, path: file });
  return r.data.project.fileUrl;
}

describe("project archives and files", () => {
  it("exports through a signed URL without credentials and imports the archive with a multipart importProject", async () => {
    const source = await newProject();
    expect((await rest("POST", `/v2/projects/${source}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).status).toBe(201);
    const written = await upload(WRITE_PROJECT_FILE, { p: source, path: "notes.txt" }, { name: "notes.txt", data: "lab notes\n" });
    expect(written.body.data.writeProjectFile).toEqual({ __typename: "WriteProjectFilePayload", file: { path: "notes.txt", sizeBytes: 10 } });

    const before = Date.now();
    const link = await exportUrl(source, "(includeSnapshots: true, compress: false)");
    expect(link.__typename).toBe("DownloadUrl");
    expect(link.url).toMatch(new RegExp(`^/v2/projects/${source}/export\\?include_snapshots=yes&compression=none&token=\\d+\\.[\\w-]{43}$`));
    const expires = Date.parse(link.expiresAt);
    expect(expires).toBeGreaterThan(before + 290_000);
    expect(expires).toBeLessThan(Date.now() + 301_000);

    const archive = await download(link.url);
    expect(archive.status).toBe(200);
    expect(archive.headers.get("content-type")).toBe("application/gns3project");
    const entries = await unzip(archive.body);
    expect(entries.every((e) => e.method === 0)).toBe(true); // compress: false reached the route
    expect(entries.find((e) => e.name === "notes.txt")?.data.toString()).toBe("lab notes\n");
    expect(json(entries.find((e) => e.name === "project.gns3")!.data).topology.nodes.map((n: any) => n.name)).toEqual(["PC1"]);
    // Auth is on: the same route without the token needs credentials.
    expect((await download(link.url.replace(/[?&]token=.*$/, ""))).status).toBe(401);

    const id = randomUUID();
    const imported = await upload(IMPORT, { id, name: "imported copy" }, { name: "lab.gns3project", data: archive.body });
    expect(imported.status).toBe(200);
    expect(imported.body.data.importProject).toEqual({
      __typename: "ImportProjectPayload",
      project: { projectId: id, name: "imported copy", status: "CLOSED", nodes: { edges: [{ node: { name: "PC1" } }] } },
    });
    const notes = await projectFileUrl(id, "notes.txt");
    expect((await download(notes.url)).body.toString()).toBe("lab notes\n");

    // Without an id the import picks one.
    const again = await upload(IMPORT, { name: "second copy" }, { name: "lab.gns3project", data: archive.body });
    expect(again.body.data.importProject.project.projectId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("writes project files (binary, byte for byte) and refuses what REST refuses, with typed errors", async () => {
    const project = await newProject();
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
    const r = await upload(WRITE_PROJECT_FILE, { p: project, path: "blob.bin" }, { name: "blob.bin", data: bytes });
    expect(r.body.data.writeProjectFile.file).toEqual({ path: "blob.bin", sizeBytes: 70_000 });
    const url = await projectFileUrl(project, "blob.bin");
    expect((await download(url.url)).body.equals(bytes)).toBe(true);

    // Names that need percent-encoding in the URL are encoded per segment and decoded once by the route.
    fs.mkdirSync(path.join(s.dataDir, "projects", project, "dir #1"));
    const odd = "dir #1/notes ?&é%20.txt";
    expect((await upload(WRITE_PROJECT_FILE, { p: project, path: odd }, { name: "n.txt", data: "odd" })).body.data.writeProjectFile.file.path).toBe(odd);
    const oddUrl = (await projectFileUrl(project, odd)).url;
    expect(oddUrl).toContain("/files/dir%20%231/notes%20%3F%26%C3%A9%2520.txt?token=");
    expect((await download(oddUrl)).body.toString()).toBe("odd");

    // As on REST (GNS3's controller): the directory must exist.
    const missingDir = await upload(WRITE_PROJECT_FILE, { p: project, path: "no/such/dir.txt" }, { name: "x", data: "x" });
    expect(missingDir.body.data.writeProjectFile.__typename).toBe("NotFoundError");
    const unknown = await upload(WRITE_PROJECT_FILE, { p: randomUUID(), path: "a.txt" }, { name: "x", data: "x" });
    expect(unknown.body.data.writeProjectFile.__typename).toBe("NotFoundError");
    expect((await projectFileUrl(project, "absent.txt")).__typename).toBe("NotFoundError");
  });

  // Issue 22's client task "upload a file to a node and download it": two requests (the upload, whose answer
  // carries the download URL, then the download), counted here.
  it("writes node files (creating their directories) and downloads them: two requests", async () => {
    const project = await newProject();
    const node = (await rest("POST", `/v2/projects/${project}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body;
    let requests = 0;
    requests++;
    const r = await upload(WRITE_NODE_FILE, { n: node.node_id, path: "configs/startup.vpc" }, { name: "startup.vpc", data: "ip 10.0.0.1/24\n" });
    const written = r.body.data.writeNodeFile;
    expect(written).toMatchObject({ __typename: "WriteNodeFilePayload", file: { path: "configs/startup.vpc", sizeBytes: 15 }, node: { nodeId: node.node_id } });
    const url = written.node.fileUrl.url;
    expect(url).toMatch(new RegExp(`^/v2/projects/${project}/nodes/${node.node_id}/files/configs/startup\\.vpc\\?token=`));
    requests++;
    const file = await download(url);
    expect(requests).toBe(2); // the whole task
    expect(file.status).toBe(200);
    expect(file.body.toString()).toBe("ip 10.0.0.1/24\n");
    const dir = path.join(s.dataDir, "projects", project, "project-files", "vpcs", node.node_id);
    expect(fs.readFileSync(path.join(dir, "configs", "startup.vpc"), "utf8")).toBe("ip 10.0.0.1/24\n");

    // The node named by its global id (what a client's cache holds) is the same node; an unknown one is NOT_FOUND.
    const global = (await query(`query($n: ID!) { emulatedNode(id: $n) { ... on EmulatedNode { id } } }`, { n: node.node_id })).data.emulatedNode.id;
    const again = await upload(WRITE_NODE_FILE, { n: global, path: "configs/startup.vpc" }, { name: "startup.vpc", data: "ip 10.0.0.2/24\n" });
    expect(again.body.data.writeNodeFile.file).toEqual({ path: "configs/startup.vpc", sizeBytes: 15 });
    const ghost = await upload(WRITE_NODE_FILE, { n: randomUUID(), path: "a.txt" }, { name: "x", data: "x" });
    expect(ghost.body.data.writeNodeFile).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND" });
  });
});

describe("signed URLs", () => {
  let project: string;
  let url: string;
  beforeAll(async () => {
    project = await newProject();
    url = (await exportUrl(project)).url;
  });

  const refused = async (target: string, init?: RequestInit) => {
    const r = await download(target, init);
    expect(r.status, target).toBe(403);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(json(r.body)).toEqual({ message: "Invalid or expired download token", status: 403 });
  };

  it("open their own path once minted, and nothing once tampered with", async () => {
    expect((await download(url)).status).toBe(200);
    const head = await download(url, { method: "HEAD" }); // the GET's headers
    expect([head.status, head.headers.get("content-type")]).toEqual([200, "application/gns3project"]);
    const token = url.slice(url.indexOf("token=") + 6);
    const flip = (c: string) => (c === "A" ? "B" : "A");
    await refused(url.slice(0, -10) + flip(url.at(-10)!) + url.slice(-9)); // forged signature
    // The last character holds 4 bits of the signature and 2 that decoding drops: a token that differs only
    // there decodes to the same bytes, yet it is not the token handed out.
    const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    await refused(url.slice(0, -1) + B64URL[B64URL.indexOf(url.at(-1)!) ^ 1]);
    await refused(url.replace(/token=(\d+)/, (_m, e) => `token=${Number(e) + 3600}`)); // a later expiry, same signature
    // The same expiry spelled otherwise: one URL has exactly one valid token.
    for (const spelling of ["0", "00", "+"]) await refused(url.replace("token=", `token=${spelling}`));
    await refused(url.replace("/export?", "/export?include_snapshots=yes&")); // another query on the same path
    await refused(url + `&token=${token}`); // two tokens
    await refused(url.replace(/token=.*/, "token=garbage"));
  });

  it("never open another path, method or service", async () => {
    const token = url.slice(url.indexOf("token=") + 6);
    const other = await newProject();
    await refused(`/v2/projects/${other}/export?token=${token}`);
    await refused(`/v2/projects/${project}/files/project.gns3?token=${token}`);
    await refused(`/v2/projects?token=${token}`);
    await refused(`/v2/projects/${project}?token=${token}`, { method: "DELETE" });
    await refused(url, { method: "POST" });
    // A bad token is refused even beside valid credentials; a token outside /v2 is no credential at all.
    const withCredentials = await fetch(`${s.url}/v2/projects/${other}/export?token=${token}`, { headers: AUTH });
    expect(withCredentials.status).toBe(403);
    expect((await download(`/graphql?query=%7Bprojects%7Bid%7D%7D&token=${token}`)).status).toBe(401);
    expect((await rest("GET", `/v2/projects/${project}`)).status).toBe(200); // nothing was deleted
  });

  it("expire", async () => {
    const short = await exportUrl(project, "(validForSeconds: 1)");
    const expiresAt = Date.parse(short.expiresAt);
    await waitFor(() => Date.now() > expiresAt + 1000, 5000, "the expiry");
    await refused(short.url);
    for (const validForSeconds of [0, 3601]) {
      const r = await exportUrl(project, `(validForSeconds: ${validForSeconds})`);
      expect(r).toEqual({ __typename: "InvalidInputError", message: "validForSeconds must be 1-3600 seconds" });
    }
  });
});

describe("symbols", () => {
  const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30"/></svg>`;
  const UPLOAD_SYMBOL = `mutation($id: ID!, $file: File!) { uploadSymbol(input: { id: $id, file: $file }) {
    __typename ... on UploadSymbolPayload { symbol { symbolId theme builtin size { widthPixels heightPixels } rawUrl { ... on DownloadUrl { url } } } }
    ... on Error { message code target } } }`;

  it("uploads a symbol and serves it through the URL the mutation returns", async () => {
    const r = await upload(UPLOAD_SYMBOL, { id: "lab/my-router.svg" }, { name: "my-router.svg", data: SVG });
    expect(r.body.data.uploadSymbol).toMatchObject({
      __typename: "UploadSymbolPayload",
      symbol: { symbolId: "my-router.svg", theme: "Custom symbols", builtin: false, size: { widthPixels: 40, heightPixels: 30 } },
    });
    const raw = await download(r.body.data.uploadSymbol.symbol.rawUrl.url);
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toBe("image/svg+xml");
    expect(raw.body.toString()).toBe(SVG);

    const builtin = await query(`{ symbols(theme: "Classic", first: 100) { edges { node { symbolId rawUrl { ... on DownloadUrl { url } } } } } }`);
    const computer = nodesOf(builtin.data.symbols).find((x: any) => x.symbolId === ":/symbols/classic/computer.svg");
    expect(computer.rawUrl.url).toMatch(/^\/v2\/symbols\/%3A%2Fsymbols%2Fclassic%2Fcomputer\.svg\/raw\?token=/);
    expect((await download(computer.rawUrl.url)).body.toString()).toContain("<svg");
  });

  it("refuses a symbol beyond its 2 MiB limit and a name that is not a file name, with typed errors", async () => {
    const big = await upload(UPLOAD_SYMBOL, { id: "huge.svg" }, { name: "huge.svg", data: Buffer.alloc(2 * 1024 * 1024 + 1, 0x20) });
    expect(big.body.data.uploadSymbol).toEqual({
      __typename: "InvalidInputError",
      message: `The file may not exceed ${2 * 1024 * 1024} bytes`,
      code: "TOO_LARGE",
      target: "file",
    });
    const dotted = await upload(UPLOAD_SYMBOL, { id: "../.." }, { name: "x.svg", data: SVG });
    expect(dotted.body.data.uploadSymbol.__typename).toBe("InvalidInputError");
    expect(fs.existsSync(path.join(s.dataDir, "symbols", "huge.svg"))).toBe(false);
  });
});

describe("hostile uploads and paths", () => {
  it("refuses a zip-slip archive in a GraphQL import and writes nothing", async () => {
    const id = randomUUID();
    const archive = await zipWith([{ name: "ok.txt" }, { name: "../evil.txt", placeholder: "AA/evil.txt" }]);
    const r = await upload(IMPORT, { id }, { name: "evil.gns3project", data: archive });
    expect(r.body.data.importProject.__typename).toBe("ConflictError");
    expect(r.body.data.importProject.message).toMatch(/^Cannot import project, unsafe archive entry/);
    const projects = path.join(s.dataDir, "projects");
    expect(fs.existsSync(path.join(projects, "evil.txt"))).toBe(false);
    expect(fs.existsSync(path.join(projects, id))).toBe(false);
    expect(fs.readdirSync(projects).filter((n) => n.startsWith(".import-"))).toEqual([]);
    expect((await rest("GET", `/v2/projects/${id}`)).status).toBe(404);

    // A project directory of the client's choosing is for local servers only, as on REST.
    const elsewhere = await upload(IMPORT, { id, path: "/tmp/elsewhere" }, { name: "ok.gns3project", data: await zipWith([]) });
    expect(elsewhere.body.data.importProject).toEqual({
      __typename: "ForbiddenError",
      message: "Importing to a custom path is only allowed on a local server",
    });
  });

  it("refuses an archive beyond the entry limit as a typed InvalidInputError (TOO_LARGE), as REST does with 413", async () => {
    const id = randomUUID();
    const archive = await zipWith(Array.from({ length: 10_000 }, (_, i) => ({ name: `f${i}` }))); // + project.gns3: one over
    const r = await upload(IMPORT_CODE, { id }, { name: "many.gns3project", data: archive });
    expect(r.body.data.importProject).toMatchObject({ __typename: "InvalidInputError", code: "TOO_LARGE", message: expect.stringMatching(/more than 10000 entries/) });
    expect((await rest("GET", `/v2/projects/${id}`)).status).toBe(404);
  });

  it("refuses path traversal in file writes and file URLs with ForbiddenError and writes nothing outside", async () => {
    const project = await newProject();
    const node = (await rest("POST", `/v2/projects/${project}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body;
    for (const evil of ["../evil.txt", "../../../../tmp/evil.txt", "/etc/evil.txt", "a\\..\\..\\evil.txt"]) {
      const w = await upload(WRITE_PROJECT_FILE, { p: project, path: evil }, { name: "x", data: "x" });
      expect(w.body.data.writeProjectFile, evil).toMatchObject({ __typename: "ForbiddenError" });
      const n = await upload(WRITE_NODE_FILE, { n: node.node_id, path: evil }, { name: "x", data: "x" });
      expect(n.body.data.writeNodeFile, evil).toMatchObject({ __typename: "ForbiddenError" });
    }
    expect((await projectFileUrl(project, "../../../etc/passwd")).__typename).toBe("ForbiddenError");
    expect(fs.existsSync(path.join(s.dataDir, "projects", "evil.txt"))).toBe(false);
    expect(fs.existsSync(path.join(s.dataDir, "evil.txt"))).toBe(false);
  });

  it("refuses an upload beyond the upload limit while it arrives (413), and keeps serving", async () => {
    const project = await newProject();
    const r = await upload(WRITE_PROJECT_FILE, { p: project, path: "big.bin" }, { name: "big.bin", data: Buffer.alloc(UPLOAD_LIMIT + 1) });
    expect(r.status).toBe(413);
    expect(r.body.errors?.[0].extensions?.code).toBe("REQUEST_ENTITY_TOO_LARGE");
    expect(fs.existsSync(path.join(s.dataDir, "projects", project, "big.bin"))).toBe(false);
    // Just under the limit: accepted (a file is one value for the input limits, however many chunks it came in).
    const fits = await upload(WRITE_PROJECT_FILE, { p: project, path: "fits.bin" }, { name: "fits.bin", data: Buffer.alloc(UPLOAD_LIMIT - 4096, 1) });
    expect(fits.body.errors).toBeUndefined();
    expect(fits.body.data.writeProjectFile.file.sizeBytes).toBe(UPLOAD_LIMIT - 4096);
    expect((await query("{ emulationVersion }")).data.emulationVersion).toBe("2.2.59");
  });

  it("answers malformed multipart requests with an error, runs nothing and writes nothing", async () => {
    const project = await newProject();
    const send = async (parts: [string, string | Blob][]) => {
      const form = new FormData();
      for (const [name, value] of parts) form.append(name, value);
      const res = await fetch(`${s.url}/graphql`, { method: "POST", headers: { ...AUTH, ...PREFLIGHT }, body: form });
      return { status: res.status, body: (await res.json()) as any };
    };
    const operations = JSON.stringify({ query: WRITE_PROJECT_FILE, variables: { p: project, path: "m.txt", file: null } });
    const file: [string, Blob] = ["0", new Blob(["x"])];
    const cases: [string, [string, string | Blob][], RegExp][] = [
      ["no operations", [["map", "{}"], file], /Missing multipart form field "operations"/],
      ["operations not JSON", [["operations", "{"], ["map", "{}"], file], /"operations" must be a valid JSON string/],
      ["map not JSON", [["operations", operations], ["map", "["], file], /"map" must be a valid JSON string/],
      ["a file part named in no map", [["operations", operations], ["map", "{}"], file], /Variable "\$file" of non-null type "File!" must not be null/],
      ["a map into the prototype", [["operations", operations], ["map", JSON.stringify({ 0: ["variables.__proto__.polluted"] })], file], /must not be null/],
    ];
    for (const [what, parts, message] of cases) {
      const r = await send(parts);
      expect(r.status, what).toBeLessThan(500);
      expect(r.body.data, what).toBeUndefined();
      expect(r.body.errors[0].message, what).toMatch(message);
    }
    expect(({} as any).polluted).toBeUndefined();
    expect(fs.existsSync(path.join(s.dataDir, "projects", project, "m.txt"))).toBe(false);
    expect((await query("{ emulationVersion }")).data.emulationVersion).toBe("2.2.59");
  });

  it("forgets an upload whose client leaves half-way, and keeps serving", async () => {
    const project = await newProject();
    const boundary = "----patchbay-half-way";
    const operations = JSON.stringify({ query: WRITE_PROJECT_FILE, variables: { p: project, path: "half.bin", file: null } });
    const head = [
      `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.file"]}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="half.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ].join("");
    const { hostname, port } = new URL(s.url);
    const socket = net.connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${AUTH.authorization}\r\nGraphQL-Preflight: 1\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + 1_000_000}\r\n\r\n${head}`,
    );
    // A tenth of the announced file, then the client is gone.
    await new Promise((resolve) => socket.write(Buffer.alloc(100_000, 7), resolve));
    socket.destroy();
    expect((await query("{ emulationVersion }")).data.emulationVersion).toBe("2.2.59");
    expect(fs.existsSync(path.join(s.dataDir, "projects", project, "half.bin"))).toBe(false);
  });

  it("takes files only as multipart file parts, one per request", async () => {
    const project = await newProject();
    const asJson = await query(WRITE_PROJECT_FILE, { p: project, path: "a.txt", file: "not a file" });
    expect(asJson.errors?.[0].message).toMatch(/File must be a file part of a multipart\/form-data request/);

    const form = new FormData();
    form.set("operations", JSON.stringify({ query: WRITE_PROJECT_FILE, variables: { p: project, path: "a.txt", file: null } }));
    form.set("map", JSON.stringify({ 0: ["variables.file"], 1: ["variables.path"] }));
    form.set("0", new Blob(["a"]), "a.txt");
    form.set("1", new Blob(["b"]), "b.txt");
    const two = await fetch(`${s.url}/graphql`, { method: "POST", headers: { ...AUTH, ...PREFLIGHT }, body: form });
    expect(two.status).toBe(400);
    expect(((await two.json()) as any).errors[0].message).toMatch(/^POST body sent invalid multipart data: (Files|Parts) limit exceeded/);
    expect(fs.existsSync(path.join(s.dataDir, "projects", project, "a.txt"))).toBe(false);
  });
});

describe("cross-site request forgery", () => {
  it("refuses form POSTs (multipart, urlencoded, text/plain) without a header a form cannot send, before running anything", async () => {
    const project = await newProject();
    const form = new FormData();
    form.set("operations", JSON.stringify({ query: WRITE_PROJECT_FILE, variables: { p: project, path: "planted.txt", file: null } }));
    form.set("map", JSON.stringify({ 0: ["variables.file"] }));
    form.set("0", new Blob(["x"]), "planted.txt");
    const deletion = `mutation { deleteProject(input: { id: "${project}" }) { __typename } }`;
    const forms: [string, BodyInit, Record<string, string>][] = [
      ["multipart/form-data", form, {}],
      ["application/x-www-form-urlencoded", new URLSearchParams({ query: deletion }), {}],
      ["text/plain", JSON.stringify({ query: deletion }), { "content-type": "text/plain" }],
    ];
    for (const [type, body, headers] of forms) {
      // What a page of another site can make a browser send: the credentials it holds, no custom header.
      const res = await fetch(`${s.url}/graphql`, { method: "POST", headers: { ...AUTH, ...headers }, body });
      expect(res.status, type).toBe(403);
      expect(((await res.json()) as any).errors[0]).toMatchObject({ message: expect.stringContaining(`A ${type} POST needs`), extensions: { code: "CSRF_PREVENTED" } });
    }
    expect(fs.existsSync(path.join(s.dataDir, "projects", project, "planted.txt"))).toBe(false);
    expect((await rest("GET", `/v2/projects/${project}`)).status).toBe(200);
    // With the header (a page of another site adding one needs a CORS preflight, which has no credentials).
    const urlencoded = await fetch(`${s.url}/graphql`, { method: "POST", headers: { ...AUTH, ...PREFLIGHT }, body: new URLSearchParams({ query: "{ emulationVersion }" }) });
    expect(((await urlencoded.json()) as any).data).toEqual({ emulationVersion: "2.2.59" });
  });
});

describe.skipIf(!toolAvailable("vpcs", findVpcs() !== null))("link captures", () => {
  const consoles: TelnetClient[] = [];
  afterAll(() => consoles.forEach((c) => c.close()));

  it("streams a running capture through the pcap URL of the link, and refuses one for a link that is not capturing", async () => {
    const project = await newProject();
    const P = `/v2/projects/${project}`;
    const ids: Record<string, string> = {};
    for (const [name, type] of [["PC1", "vpcs"], ["PC2", "vpcs"], ["SW1", "ethernet_switch"]]) {
      ids[name] = (await rest("POST", `${P}/nodes`, { name, node_type: type, compute_id: "local" })).body.node_id;
    }
    const links: string[] = [];
    for (const [pc, port] of [["PC1", 0], ["PC2", 1]] as const) {
      const r = await rest("POST", `${P}/links`, {
        nodes: [
          { node_id: ids[pc], adapter_number: 0, port_number: 0 },
          { node_id: ids.SW1, adapter_number: 0, port_number: port },
        ],
      });
      links.push(r.body.link_id);
    }
    const pcapUrl = async (linkId: string) =>
      (
        await query(`query($l: ID!) { link(id: $l) { ... on Link {
          pcapUrl { __typename ... on DownloadUrl { url } ... on Error { message } } } } }`, { l: linkId })
      ).data.link.pcapUrl;
    expect(await pcapUrl(links[0])).toEqual({ __typename: "ConflictError", message: "This link has no active packet capture" });

    expect((await rest("POST", `${P}/links/${links[0]}/start_capture`, {})).status).toBe(201);
    expect((await rest("POST", `${P}/nodes/start`)).status).toBe(204);
    for (const [pc, ip] of [["PC1", "10.0.0.1"], ["PC2", "10.0.0.2"]]) {
      const c = await TelnetClient.connect((await rest("GET", `${P}/nodes/${ids[pc]}`)).body.console);
      consoles.push(c);
      await c.waitFor(/VPCS> $/);
      await c.run(`ip ${ip}/24`);
    }

    expect(await exportUrl(project)).toEqual({ __typename: "ConflictError", message: "Project must be stopped in order to export it" });

    const url = (await pcapUrl(links[0])).url;
    expect(url).toMatch(new RegExp(`^${P}/links/${links[0]}/pcap\\?token=`));
    const stream = await followPcap(s.url + url); // no credentials
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toBe("application/vnd.tcpdump.pcap");
    expect((await consoles[0].run("ping 10.0.0.2 -c 2", 20_000)).match(/icmp_seq=\d ttl=64/g)).toHaveLength(2);
    const echoes = await waitFor(() => {
      const seen = icmpEchoes(parsePcap(stream.bytes()).packets.map((p) => p.data));
      return seen.some((e) => e.type === 0) && seen;
    }, 10_000, "the echo reply in the pcap stream");
    expect(echoes).toContainEqual({ type: 8, src: "10.0.0.1", dst: "10.0.0.2" });
    await stream.stop();

    // Once stopped, the capture is a project file, downloaded through the project's file URL.
    const stopped = await rest("POST", `${P}/links/${links[0]}/stop_capture`);
    expect(await pcapUrl(links[0])).toMatchObject({ __typename: "ConflictError" });
    const file = await download((await projectFileUrl(project, `project-files/captures/${stopped.body.capture_file_name}`)).url);
    expect(file.headers.get("content-type")).toBe("application/vnd.tcpdump.pcap");
    expect(icmpEchoes(parsePcap(file.body).packets.map((p) => p.data))).toContainEqual({ type: 0, src: "10.0.0.2", dst: "10.0.0.1" });
    expect((await rest("POST", `${P}/nodes/stop`)).status).toBe(204);
  }, 60_000);
});
