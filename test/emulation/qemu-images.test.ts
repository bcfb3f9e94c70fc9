import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { computeInstance, twoHosts } from "../support/computes.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";

/**
 * The image store through GNS3's routes (compat-qemu §1): uploads streamed into <data dir>/images/QEMU with an md5
 * sidecar, lists, downloads, names that try to leave the directory, the upload limit, the controller's routes to the
 * local compute and to a second instance in compute mode, and the GraphQL face.
 */
const md5 = (b: Buffer | string) => createHash("md5").update(b).digest("hex");
const KERNEL = Buffer.alloc(300_000, "k");
const INITRD = Buffer.from("initrd: more than seven bytes");
/** A header no HTML form can send: GraphQL multipart POSTs need one. */
const PREFLIGHT = { "graphql-preflight": "1" };

const post = (base: string, url: string, body: Buffer | string) =>
  fetch(base + url, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: typeof body === "string" ? body : new Uint8Array(body) });

/** Every file under `dir` (relative paths), to prove that a refused upload wrote nothing anywhere. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => !e.isDirectory()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe("qemu images on this server", () => {
  let s: TestServer;
  let images: string;

  beforeAll(async () => {
    s = await startTestServer({ uploadLimit: "1mb" });
    images = path.join(s.dataDir, "images", "QEMU");
  });
  afterAll(() => s?.close());

  it("stores a raw upload (204), caches its md5 in a sidecar and lists it as GNS3 does", async () => {
    const r = await post(s.url, "/v2/compute/qemu/images/vmlinuz", KERNEL);
    expect(r.status).toBe(204);
    expect(fs.readFileSync(path.join(images, "vmlinuz")).equals(KERNEL)).toBe(true);
    expect(fs.readFileSync(path.join(images, "vmlinuz.md5sum"), "utf8")).toBe(md5(KERNEL));

    // Through the controller's route for the local compute: 200 {} as GNS3's controller answers.
    const c = await post(s.url, "/v2/computes/local/qemu/images/initrd.gz", INITRD);
    expect(c.status).toBe(200);
    expect(await c.json()).toEqual({});
    // Files GNS3 does not list: tiny ones, ELF executables, hidden files, sidecars, sub-directories.
    fs.writeFileSync(path.join(images, "tiny"), "abc");
    fs.writeFileSync(path.join(images, "qemu-binary"), Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(20)]));
    expect((await post(s.url, "/v2/compute/qemu/images/sub/dir/disk.qcow2", "in a sub-directory")).status).toBe(204);
    expect(fs.existsSync(path.join(images, "sub", "dir", "disk.qcow2"))).toBe(true);

    const expected = [
      { filename: "initrd.gz", path: "initrd.gz", md5sum: md5(INITRD), filesize: INITRD.length },
      { filename: "vmlinuz", path: "vmlinuz", md5sum: md5(KERNEL), filesize: KERNEL.length },
    ];
    // Other tests of this file add images of their own: only this test's files are compared, the order checked whole.
    const mine = (list: any[]) => list.filter((i) => ["initrd.gz", "vmlinuz", "tiny", "qemu-binary", "disk.qcow2"].includes(i.filename));
    for (const route of ["/v2/compute/qemu/images", "/v2/computes/local/qemu/images"]) {
      const list = (await call(s.url, "GET", route)).body;
      expect(mine(list)).toEqual(expected);
      expect(list.map((i: any) => i.filename)).toEqual(list.map((i: any) => i.filename).sort());
      expect(list.filter((i: any) => i.filename.startsWith(".") || i.filename.endsWith(".md5sum"))).toEqual([]);
    }

    // A new upload under the same name replaces the file and its md5.
    expect((await post(s.url, "/v2/compute/qemu/images/initrd.gz", "replaced initrd")).status).toBe(204);
    expect(mine((await call(s.url, "GET", "/v2/compute/qemu/images")).body)[0]).toEqual({ filename: "initrd.gz", path: "initrd.gz", md5sum: md5("replaced initrd"), filesize: 15 });
    expect(fs.readdirSync(images).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("downloads an image, and answers 409 naming a missing one", async () => {
    fs.mkdirSync(images, { recursive: true });
    fs.writeFileSync(path.join(images, "dl.img"), "download me");
    for (const route of ["/v2/compute/qemu/images", "/v2/computes/local/qemu/images"]) {
      const r = await fetch(`${s.url}${route}/dl.img`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/octet-stream");
      expect(await r.text()).toBe("download me");
      const missing = await call(s.url, "GET", `${route}/nope.bin`);
      expect(missing.status).toBe(409);
      expect(missing.body).toEqual({ message: "The image nope.bin is missing", status: 409 });
    }
    // GraphQL: a signed URL of that route.
    const q = await gql(s.url, `{ images(type: QEMU, first: 100) { ... on QueryImagesConnection { edges { node { filename downloadUrl { url } } } } } }`);
    const url = nodesOf(q.data.images).find((i: any) => i.filename === "dl.img").downloadUrl.url;
    expect(await (await fetch(new URL(url, s.url))).text()).toBe("download me");
  });

  it("refuses names that leave the image directory, writing nothing anywhere", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-outside-"));
    fs.mkdirSync(images, { recursive: true });
    fs.symlinkSync(outside, path.join(images, "escape"));
    const before = filesUnder(s.dataDir);
    const escaping = ["%2E%2E%2Fx.bin", "..%2F..%2Fx.bin", "%2Fetc%2Fx.bin", "sub%2F..%2F..%2F..%2Fx.bin", "escape/x.bin", "escape%2Fnew%2Fx.bin"];
    for (const name of escaping) {
      for (const route of ["/v2/compute/qemu/images/", "/v2/computes/local/qemu/images/"]) {
        const r = await post(s.url, route + name, "payload!");
        expect(r.status, `${route}${name}`).toBe(403);
      }
    }
    const traversal = await post(s.url, "/v2/compute/qemu/images/%2E%2E%2Fx.bin", "payload!");
    expect(await traversal.json()).toEqual({ message: `Could not write image: ../x.bin, ${path.join(s.dataDir, "images", "x.bin")} is forbidden`, status: 403 });
    for (const name of [".hidden", "a%5Cb", "sub/.x", "a//b", "x%01y", "vmlinuz.md5sum"]) {
      const r = await post(s.url, `/v2/compute/qemu/images/${name}`, "payload!");
      expect(r.status, name).toBe(400);
    }
    expect(filesUnder(s.dataDir)).toEqual(before);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(s.dataDir, "images", "x.bin"))).toBe(false);
    // Image routes exist for qemu, dynamips and iou only.
    expect((await post(s.url, "/v2/computes/local/vpcs/images/x.bin", "payload!")).status).toBe(404);
  });

  it("refuses an upload beyond the limit with 413 and keeps nothing, declared or streamed", async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 1);
    const declared = await post(s.url, "/v2/compute/qemu/images/big.img", big);
    expect(declared.status).toBe(413);
    expect((await call(s.url, "POST", "/v2/computes/local/qemu/images/big.img", big.toString())).status).toBe(413);
    // Without a length (chunked): refused while it arrives.
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(64 * 1024));
        c.close();
      },
    });
    const streamed = await fetch(`${s.url}/v2/compute/qemu/images/big.img`, { method: "POST", body: chunks, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    await waitFor(() => !fs.readdirSync(images).some((f) => f.includes("big.img")), 5000, "no trace of big.img");
  });

  it("never lets a client path stand where a sidecar goes: `<n>.md5sum/x` is refused, `<n>` then stored whole", async () => {
    for (const route of ["/v2/compute/qemu/images/", "/v2/computes/local/qemu/images/"]) {
      for (const name of ["side.img.md5sum/x", "sub/side.img.md5sum/x", "side.img.md5sum%2Fx"]) {
        expect((await post(s.url, route + name, "payload!")).status, route + name).toBe(400);
      }
      expect(fs.statSync(path.join(images, "side.img.md5sum"), { throwIfNoEntry: false })?.isDirectory() ?? false).toBe(false);
      expect((await post(s.url, `${route}side.img`, "side image bytes")).status).toBeLessThan(300);
      expect(fs.readFileSync(path.join(images, "side.img.md5sum"), "utf8")).toBe(md5("side image bytes"));
    }
    // A directory an older store let in: the upload is a clean 409, and neither image nor temporary file is kept.
    fs.mkdirSync(path.join(images, "old.img.md5sum"));
    const refused = await post(s.url, "/v2/compute/qemu/images/old.img", "old image bytes");
    expect(refused.status).toBe(409);
    expect(fs.readdirSync(images).filter((f) => f.includes("old.img"))).toEqual(["old.img.md5sum"]);
  });

  it("GraphQL: images(type: QEMU) and a multipart uploadImage, with typed errors", async () => {
    const upload = async (filename: string, data: string) => {
      const form = new FormData();
      // The File variable sits inside the one input, so the multipart map still names variables.file.
      const q = `mutation($f: String!, $file: File!) { uploadImage(input: { type: QEMU, filename: $f, file: $file }) {
        __typename ... on UploadImagePayload { image { filename path filesizeBytes } } ... on Error { message } } }`;
      form.set("operations", JSON.stringify({ query: q, variables: { f: filename, file: null } }));
      form.set("map", JSON.stringify({ 0: ["variables.file"] }));
      form.set("0", new Blob([data]), "upload.bin");
      const res = await fetch(`${s.url}/graphql`, { method: "POST", headers: PREFLIGHT, body: form });
      return ((await res.json()) as any).data.uploadImage;
    };
    expect(await upload("gql.qcow2", "uploaded over GraphQL")).toEqual({ __typename: "UploadImagePayload", image: { filename: "gql.qcow2", path: "gql.qcow2", filesizeBytes: 21 } });
    expect(fs.readFileSync(path.join(images, "gql.qcow2"), "utf8")).toBe("uploaded over GraphQL");
    expect(await upload("../gql.qcow2", "nope nope")).toMatchObject({ __typename: "ForbiddenError", message: expect.stringMatching(/^Could not write image: \.\.\/gql\.qcow2/) });
    const list = await gql(s.url, `{ images(type: QEMU, first: 100) { __typename ... on QueryImagesConnection { totalCount edges { node { filename path md5sum filesizeBytes } } } } }`);
    expect(list.data.images.totalCount).toBe(list.data.images.edges.length);
    expect(nodesOf(list.data.images)).toContainEqual({ filename: "gql.qcow2", path: "gql.qcow2", md5sum: md5("uploaded over GraphQL"), filesizeBytes: 21 });
    const none = await gql(s.url, `{ images(computeId: "nope", type: QEMU) { __typename ... on Error { message } } }`);
    expect(none.data.images).toEqual({ __typename: "NotFoundError", message: "Compute ID nope doesn't exist" });
  });

  it("GraphQL: a qemu node's settings as typed fields", async () => {
    fs.mkdirSync(images, { recursive: true });
    fs.writeFileSync(path.join(images, "hda.qcow2"), "disk image bytes");
    const p = await call(s.url, "POST", "/v2/projects", { name: "qemu-typed" });
    const n = await call(s.url, "POST", `/v2/projects/${p.body.project_id}/nodes`, {
      name: "VM",
      node_type: "qemu",
      compute_id: "local",
      properties: { platform: "x86_64", ram: 192, hda_disk_image: "hda.qcow2", hda_disk_interface: "virtio", options: "-nographic" },
    });
    expect(n.status, n.text).toBe(201);
    const r = await gql(
      s.url,
      `query($n: ID!) { emulatedNode(id: $n) { ... on EmulatedNode {
        settings { ... on QemuSettings { platform ramMb cpus adapters adapterType macAddress linkedClone onClose options disks { slot name md5sum interface } kernelImage { name } } } } } }`,
      { n: n.body.node_id },
    );
    expect(r.data.emulatedNode.settings).toEqual({
      platform: "x86_64",
      ramMb: 192,
      cpus: 1,
      adapters: 1,
      adapterType: "e1000",
      macAddress: n.body.properties.mac_address,
      linkedClone: true,
      onClose: "POWER_OFF",
      options: "-nographic",
      disks: [{ slot: "HDA", name: "hda.qcow2", md5sum: md5("disk image bytes"), interface: "virtio" }],
      kernelImage: null,
    });
    // Kept by the read cache until the node changes: a change through REST shows at once.
    const ram = async () =>
      (await gql(s.url, `query($p: ID!) { project(id: $p) { nodes { edges { node { settings { ... on QemuSettings { ramMb } } } } } } }`, { p: p.body.project_id })).data.project.nodes.edges[0].node.settings.ramMb;
    expect(await ram()).toBe(192);
    expect(await ram()).toBe(192);
    expect((await call(s.url, "PUT", `/v2/projects/${p.body.project_id}/nodes/${n.body.node_id}`, { properties: { ram: 320 } })).status).toBe(200);
    expect(await ram()).toBe(320);
  });
});

/** A controller and a second instance in compute mode (test/support/computes.ts), with a smaller upload limit. */
describe("qemu images on a remote compute, through the controller", () => {
  let ctl: TestServer;
  let cmp: TestServer;
  let compute: Awaited<ReturnType<typeof computeInstance>>;

  beforeAll(async () => {
    ({ ctl, cmp, compute } = await twoHosts({ uploadLimit: "1mb" }, { uploadLimit: "512kb" }));
  });
  afterAll(async () => {
    await ctl?.close();
    await cmp?.close();
    await compute?.drop();
  });

  it("streams uploads to the compute's store and lists them sorted by filename", async () => {
    const r = await post(ctl.url, "/v2/computes/hostb/qemu/images/vmlinuz", KERNEL);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({});
    expect((await post(ctl.url, "/v2/computes/hostb/qemu/images/initrd.gz", INITRD)).status).toBe(200);
    const remote = path.join(cmp.dataDir, "images", "QEMU");
    expect(fs.readFileSync(path.join(remote, "vmlinuz")).equals(KERNEL)).toBe(true);
    expect(fs.readFileSync(path.join(remote, "vmlinuz.md5sum"), "utf8")).toBe(md5(KERNEL));
    expect(fs.existsSync(path.join(ctl.dataDir, "images", "QEMU", "vmlinuz"))).toBe(false);
    // Another test of this block adds an image of its own: only this test's are compared.
    const mine = (list: any[]) => list.filter((i) => ["initrd.gz", "vmlinuz"].includes(i.filename));
    expect(mine((await call(ctl.url, "GET", "/v2/computes/hostb/qemu/images")).body)).toEqual([
      { filename: "initrd.gz", path: "initrd.gz", md5sum: md5(INITRD), filesize: INITRD.length },
      { filename: "vmlinuz", path: "vmlinuz", md5sum: md5(KERNEL), filesize: KERNEL.length },
    ]);
    const gq = await gql(ctl.url, `{ images(computeId: "hostb", type: QEMU, first: 100) { ... on QueryImagesConnection { edges { node { filename } } } } }`);
    expect(mine(nodesOf(gq.data.images)).map((i: any) => i.filename)).toEqual(["initrd.gz", "vmlinuz"]);
    // A remote compute's image is downloaded from that compute (upstream's controller cannot relay it either).
    const dl = await call(ctl.url, "GET", "/v2/computes/hostb/qemu/images/vmlinuz");
    expect(dl.status).toBe(409);
    expect(dl.body.message).toBe("Download the image from its compute: GET /v2/compute/qemu/images/vmlinuz on compute hostb");
    expect((await fetch(`${cmp.url}/v2/compute/qemu/images/vmlinuz`).then((r) => r.arrayBuffer())).byteLength).toBe(KERNEL.length);
  });

  it("checks a remote qemu node's images on its compute: 409 naming a missing one, no node kept", async () => {
    expect((await post(ctl.url, "/v2/computes/hostb/qemu/images/remote-kernel", KERNEL)).status).toBe(200);
    const p = await call(ctl.url, "POST", "/v2/projects", { name: "remote-images" });
    const P = `/v2/projects/${p.body.project_id}/nodes`;
    const node = (kernel: string) => call(ctl.url, "POST", P, { name: "VM", node_type: "qemu", compute_id: "hostb", properties: { platform: "x86_64", kernel_image: kernel } });
    const missing = await node("not-there");
    expect(missing.status).toBe(409);
    expect(missing.body.message).toMatch(/The image not-there is missing/);
    expect((await call(ctl.url, "GET", P)).body).toEqual([]);
    const ok = await node("remote-kernel");
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.properties.kernel_image).toBe("remote-kernel");
  });

  it("passes on the compute's refusals: a name leaving its store (403) and its own, smaller, limit (413)", async () => {
    const before = filesUnder(cmp.dataDir);
    const escape = await post(ctl.url, "/v2/computes/hostb/qemu/images/%2E%2E%2Fx.bin", "payload!");
    expect(escape.status).toBe(403);
    expect((await escape.json()).message).toMatch(/^Could not write image: \.\.\/x\.bin, .* is forbidden$/);
    const tooBig = await post(ctl.url, "/v2/computes/hostb/qemu/images/big.img", Buffer.alloc(600 * 1024, 2));
    expect(tooBig.status).toBe(413);
    expect(filesUnder(cmp.dataDir)).toEqual(before);
  });
});
