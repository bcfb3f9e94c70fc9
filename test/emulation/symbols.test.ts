import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";

const BUILTIN = path.resolve("src/emulation/symbols/builtin/classic");
const builtinFile = (name: string) => fs.readFileSync(path.join(BUILTIN, name), "utf8");
const OWN_SET = [
  "atm_switch.svg", "cloud.svg", "computer.svg", "docker_guest.svg", "ethernet_switch.svg", "firewall.svg", "frame_relay_switch.svg",
  "hub.svg", "multilayer_switch.svg", "nat.svg", "qemu_guest.svg", "router.svg", "server.svg", "traceng.svg", "vbox_guest.svg",
  "vmware_guest.svg", "vpcs_guest.svg",
];
/** Every node type a template may have (GNS3 2.2's list). */
const TEMPLATE_TYPES = [
  "cloud", "nat", "ethernet_hub", "ethernet_switch", "frame_relay_switch", "atm_switch", "docker", "dynamips", "vpcs", "traceng",
  "virtualbox", "vmware", "iou", "qemu",
];
/** GNS3 2.2's Classic theme: node role → symbol (GET /v2/default_symbols upstream). */
const CLASSIC_ROLES = {
  cloud: ":/symbols/classic/cloud.svg",
  nat: ":/symbols/classic/nat.svg",
  ethernet_switch: ":/symbols/classic/ethernet_switch.svg",
  ethernet_hub: ":/symbols/classic/hub.svg",
  frame_relay_switch: ":/symbols/classic/frame_relay_switch.svg",
  atm_switch: ":/symbols/classic/atm_switch.svg",
  router: ":/symbols/classic/router.svg",
  multilayer_switch: ":/symbols/classic/multilayer_switch.svg",
  firewall: ":/symbols/classic/firewall.svg",
  computer: ":/symbols/classic/computer.svg",
  vpcs_guest: ":/symbols/classic/vpcs_guest.svg",
  qemu_guest: ":/symbols/classic/qemu_guest.svg",
  vbox_guest: ":/symbols/classic/vbox_guest.svg",
  vmware_guest: ":/symbols/classic/vmware_guest.svg",
  docker_guest: ":/symbols/classic/docker_guest.svg",
};

async function upload(base: string, id: string, body: string | Buffer) {
  const res = await fetch(`${base}/v2/symbols/${id}/raw`, { method: "POST", body: typeof body === "string" ? body : new Uint8Array(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe("symbols", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());

  it("lists the built-in set, sorted by theme, in GNS3's shape", async () => {
    const r = await call(s.url, "GET", "/v2/symbols");
    expect(r.status).toBe(200);
    const classic = r.body.filter((x: any) => x.theme === "Classic");
    expect(classic.map((x: any) => x.filename).sort()).toEqual(OWN_SET);
    expect(classic).toContainEqual({ builtin: true, filename: "router.svg", symbol_id: ":/symbols/classic/router.svg", theme: "Classic" });
    const themes = r.body.map((x: any) => x.theme);
    expect(themes).toEqual([...themes].sort());
  });

  it("serves a symbol by id, with or without URL encoding", async () => {
    for (const url of ["/v2/symbols/:/symbols/classic/router.svg/raw", "/v2/symbols/%3A%2Fsymbols%2Fclassic%2Frouter.svg/raw"]) {
      const r = await call(s.url, "GET", url);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("image/svg+xml");
      expect(r.headers.get("x-route")).toBe("/v2/symbols/{symbol_id:.+}/raw");
      expect(r.headers.get("last-modified")).toBeTruthy();
      expect(Number(r.headers.get("content-length"))).toBe(Buffer.byteLength(r.text));
      expect(r.text).toBe(builtinFile("router.svg"));
    }
  });

  it("every built-in is our own well-formed SVG with a size", async () => {
    for (const name of OWN_SET) {
      const text = builtinFile(name);
      expect(text).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\d+" height="\d+"/);
      expect(text).not.toMatch(/inkscape|sodipodi|Created with/i);
      expect(text, name).toMatch(/^<svg [^>]*>\n  <title>[^<]+<\/title>\n[\s\S]*<\/svg>\n$/);
      const d = await call(s.url, "GET", `/v2/symbols/:/symbols/classic/${name}/dimensions`);
      expect(d.status).toBe(200);
      expect(d.body.width).toBeGreaterThan(0);
      expect(d.body.height).toBeGreaterThan(0);
    }
  });

  it("falls back to the classic symbol with the same name, else the classic computer", async () => {
    expect((await call(s.url, "GET", "/v2/symbols/:/symbols/router.svg/raw")).text).toBe(builtinFile("router.svg"));
    expect((await call(s.url, "GET", "/v2/symbols/:/symbols/affinity/circle/blue/firewall.svg/raw")).text).toBe(builtinFile("firewall.svg"));
    const unknown = await call(s.url, "GET", "/v2/symbols/nonexistent.png/raw");
    expect(unknown.status).toBe(200);
    expect(unknown.headers.get("content-type")).toBe("image/svg+xml");
    expect(unknown.text).toBe(builtinFile("computer.svg"));
  });

  it("stores an upload (204) under <dataDir>/symbols and serves, sizes and lists it as a custom symbol", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="20"></svg>';
    const r = await upload(s.url, "mysym.svg", svg);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(fs.readFileSync(path.join(s.dataDir, "symbols", "mysym.svg"), "utf8")).toBe(svg);
    const raw = await call(s.url, "GET", "/v2/symbols/mysym.svg/raw");
    expect(raw.text).toBe(svg);
    expect(raw.headers.get("content-type")).toBe("image/svg+xml");
    expect((await call(s.url, "GET", "/v2/symbols/mysym.svg/dimensions")).body).toEqual({ height: 20, width: 10 });
    const list = (await call(s.url, "GET", "/v2/symbols")).body;
    expect(list).toContainEqual({ builtin: false, filename: "mysym.svg", symbol_id: "mysym.svg", theme: "Custom symbols" });
    expect(list.at(-1).theme).toBe("Custom symbols"); // sorted by theme

    const png = Buffer.alloc(33);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
    png.writeUInt32BE(48, 16);
    png.writeUInt32BE(32, 20);
    expect((await upload(s.url, "icon.png", png)).status).toBe(204);
    expect((await call(s.url, "GET", "/v2/symbols/icon.png/dimensions")).body).toEqual({ width: 48, height: 32 });
    expect((await call(s.url, "GET", "/v2/symbols/icon.png/raw")).headers.get("content-type")).toBe("image/png");
  });

  it("keeps only the base name of an uploaded id: nothing is written outside the symbols directory", async () => {
    expect((await upload(s.url, "..%2F..%2Fescaped.svg", "<svg/>")).status).toBe(204);
    expect((await upload(s.url, ":/symbols/classic/router.svg", "<svg width='1' height='1'/>")).status).toBe(204);
    expect(fs.existsSync(path.join(s.dataDir, "symbols", "escaped.svg"))).toBe(true);
    expect(fs.existsSync(path.join(s.dataDir, "escaped.svg"))).toBe(false);
    expect(fs.existsSync(path.join(path.dirname(s.dataDir), "escaped.svg"))).toBe(false);
    expect(fs.existsSync(path.join(s.dataDir, "symbols", "router.svg"))).toBe(true);
    expect((await call(s.url, "GET", "/v2/symbols/:/symbols/classic/router.svg/raw")).text).toBe(builtinFile("router.svg")); // built-in untouched
  });

  it("refuses names that are empty, '.' or '..' with GNS3's 400 shape", async () => {
    for (const id of ["a%2F..", "a%2F.", "a%2F"]) {
      const r = await upload(s.url, id, "<svg/>");
      expect(r.status, id).toBe(400);
      const body = JSON.parse(r.text);
      expect(body).toMatchObject({ status: 400, method: "POST", request: {} });
      expect(body.path).toMatch(/^\/v2\/symbols\/\{symbol_id:\.\+\}/);
      expect(body.message).toMatch(/^Invalid symbol name/);
    }
  });

  it("refuses an oversized upload with 413 and stores nothing", async () => {
    const r = await upload(s.url, "huge.svg", Buffer.alloc(2 * 1024 * 1024 + 1, 0x20));
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text)).toMatchObject({ status: 413 });
    expect(fs.existsSync(path.join(s.dataDir, "symbols", "huge.svg"))).toBe(false);
  });

  it("never serves files outside the symbols directory (traversal and symlinks fall back to the default)", async () => {
    fs.writeFileSync(path.join(s.dataDir, "private.svg"), "PRIVATE");
    fs.symlinkSync(path.join(s.dataDir, "private.svg"), path.join(s.dataDir, "symbols", "link.svg"));
    for (const id of ["..%2Fprivate.svg", "..%2F..%2Fprivate.svg", "%2Fetc%2Fpasswd", "link.svg", "..%2Fsecret.key", ":%2F..%2F..%2Fprivate.svg"]) {
      const r = await call(s.url, "GET", `/v2/symbols/${id}/raw`);
      expect(r.status, id).toBe(200);
      expect(r.text, id).not.toContain("PRIVATE");
      expect(r.text, id).not.toContain("root:");
    }
    expect((await call(s.url, "GET", "/v2/symbols")).body.map((x: any) => x.filename)).not.toContain("link.svg"); // links are not symbols
  });

  it("answers unknown sub-routes with GNS3's plain 404 and other methods with 405", async () => {
    const r = await call(s.url, "GET", "/v2/symbols/mysym.svg/other");
    expect(r.status).toBe(404);
    expect(r.text).toBe("404: Not Found");
    expect(r.headers.get("x-route")).toBeNull();
    expect((await call(s.url, "DELETE", "/v2/symbols/mysym.svg/raw")).status).toBe(405);
  });

  it("gives GNS3's Classic role of each kind of node, every one drawn here", async () => {
    const r = await call(s.url, "GET", "/v2/default_symbols");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ Classic: CLASSIC_ROLES });
    const ids = new Set((await call(s.url, "GET", "/v2/symbols")).body.map((x: any) => x.symbol_id));
    for (const id of Object.values(r.body.Classic)) expect(ids.has(id)).toBe(true);
  });

  it("draws the symbol of every built-in template and of every template type's default (no generic computer)", async () => {
    const builtins = (await call(s.url, "GET", "/v2/templates")).body.filter((t: any) => t.builtin);
    expect(builtins.map((t: any) => t.template_type).sort()).toEqual(["atm_switch", "cloud", "ethernet_hub", "ethernet_switch", "frame_relay_switch", "nat", "vpcs"]);
    const defaults: string[] = [];
    for (const template_type of TEMPLATE_TYPES) {
      // A docker template names its image (GNS3's schema requires it).
      const t = await call(s.url, "POST", "/v2/templates", { name: `symbol of ${template_type}`, template_type, compute_id: "local", ...(template_type === "docker" && { image: "busybox" }) });
      expect(t.status, t.text).toBe(201);
      defaults.push(t.body.symbol);
    }
    // The GUI asks for each template's short id (:/symbols/<file>, the ":" raw or encoded), the picker for the full one.
    for (const id of [...builtins.map((t: any) => t.symbol), ...defaults]) {
      const file = id.split("/").pop();
      expect(OWN_SET, id).toContain(file);
      for (const url of [`/v2/symbols/${id}/raw`, `/v2/symbols/${encodeURIComponent(id)}/raw`, `/v2/symbols/:/symbols/classic/${file}/raw`]) {
        const raw = await call(s.url, "GET", url);
        expect([raw.status, raw.headers.get("content-type")], url).toEqual([200, "image/svg+xml"]);
        expect(raw.text, url).toBe(builtinFile(file));
      }
    }
  });

  it("offers the same catalogue over GraphQL", async () => {
    const r = await gql(s.url, `{ symbols(theme: "Classic", first: 100) { totalCount edges { node { symbolId filename theme builtin size { widthPixels heightPixels } } } } defaultSymbols { theme role symbolId } }`);
    expect(r.errors).toBeUndefined();
    expect(r.data.symbols.totalCount).toBe(OWN_SET.length);
    expect(nodesOf(r.data.symbols).map((x: any) => x.filename).sort()).toEqual(OWN_SET);
    expect(nodesOf(r.data.symbols).find((x: any) => x.filename === "router.svg")).toEqual({
      symbolId: ":/symbols/classic/router.svg",
      filename: "router.svg",
      theme: "Classic",
      builtin: true,
      size: { widthPixels: 66, heightPixels: 45 },
    });
    expect(r.data.defaultSymbols).toContainEqual({ theme: "Classic", role: "router", symbolId: ":/symbols/classic/router.svg" });
  });
});
