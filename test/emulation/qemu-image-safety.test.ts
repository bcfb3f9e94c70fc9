import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOnPath } from "../../src/platform/core/executables.js";
import { call, startTestServer, type TestServer } from "../support/server.js";

/**
 * Issue 19, point 1: images QEMU opens are checked on upload and at use — a backing file, qcow2 data file or any
 * reference outside the image store is refused (an uploaded qcow2 backed by `/etc/shadow` made that file readable
 * from the guest); image names hold no comma (a multiboot `-initrd m,/abs/path` loads `/abs/path`).
 */
const qemuImg = findOnPath("qemu-img");
const qemuInstalled = findOnPath("qemu-system-x86_64") !== null;
const PREFLIGHT = { "graphql-preflight": "1" };

const post = (base: string, url: string, body: Buffer | string) =>
  fetch(base + url, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: typeof body === "string" ? body : new Uint8Array(body) });

async function gqlUpload(base: string, filename: string, data: Buffer) {
  const form = new FormData();
  const q = `mutation($f: String!, $file: File!) { uploadImage(input: { type: QEMU, filename: $f, file: $file }) {
    __typename ... on UploadImagePayload { image { filename } } ... on Error { message } } }`;
  form.set("operations", JSON.stringify({ query: q, variables: { f: filename, file: null } }));
  form.set("map", JSON.stringify({ 0: ["variables.file"] }));
  form.set("0", new Blob([new Uint8Array(data)]), "upload.bin");
  const res = await fetch(`${base}/graphql`, { method: "POST", headers: PREFLIGHT, body: form });
  return ((await res.json()) as any).data.uploadImage;
}

describe.skipIf(!qemuImg)("qemu images that refer to host files (requires qemu-img)", () => {
  let s: TestServer;
  let images: string;
  /** Outside the store: the host file a hostile image points at, and where the test images are made. */
  const host = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-host-"));
  const secret = path.join(host, "secret.raw");
  const made = (name: string, ...args: string[]) => {
    execFileSync(qemuImg!, ["create", "-q", "-f", "qcow2", ...args, path.join(host, name), "1M"], { cwd: host });
    return fs.readFileSync(path.join(host, name));
  };
  let absolute: Buffer, protocol: Buffer, dataFile: Buffer, base: Buffer, overlay: Buffer;

  beforeAll(async () => {
    fs.writeFileSync(secret, Buffer.alloc(1024 * 1024, "s"));
    absolute = made("absolute.qcow2", "-F", "raw", "-b", secret);
    protocol = made("protocol.qcow2", "-u", "-F", "raw", "-b", "nbd:127.0.0.1:9");
    dataFile = made("data-file.qcow2", "-o", `data_file=${path.join(host, "data.raw")},data_file_raw=on`);
    base = made("base.qcow2");
    overlay = made("overlay.qcow2", "-F", "qcow2", "-b", "base.qcow2"); // relative: base.qcow2 next to it
    s = await startTestServer();
    images = path.join(s.dataDir, "images", "QEMU");
  });
  afterAll(async () => {
    await s?.close();
    fs.rmSync(host, { recursive: true, force: true });
  });

  it("refuses on upload, on every route, an image that makes QEMU open a host file or socket; keeps nothing", async () => {
    for (const [name, data, what] of [
      ["absolute.qcow2", absolute, `backing file ${secret}`],
      ["protocol.qcow2", protocol, "backing file nbd:"],
      ["data-file.qcow2", dataFile, `data file ${path.join(host, "data.raw")}`],
    ] as const) {
      for (const route of ["/v2/compute/qemu/images/", "/v2/computes/local/qemu/images/"]) {
        const r = await post(s.url, route + name, data);
        expect(r.status, route + name).toBe(409);
        expect(((await r.json()) as any).message).toContain(`Image ${name} refers to ${what}`);
      }
      expect(await gqlUpload(s.url, name, data)).toMatchObject({ __typename: "ConflictError", message: expect.stringContaining(`refers to ${what}`) });
    }
    expect(fs.readdirSync(images)).toEqual([]); // no image, no sidecar, no temporary file
    expect((await call(s.url, "GET", "/v2/compute/qemu/images")).body).toEqual([]);
  });

  it("accepts a backing chain inside the store", async () => {
    expect((await post(s.url, "/v2/compute/qemu/images/base.qcow2", base)).status).toBe(204);
    expect((await post(s.url, "/v2/compute/qemu/images/overlay.qcow2", overlay)).status).toBe(204);
    expect(await gqlUpload(s.url, "overlay2.qcow2", overlay)).toEqual({ __typename: "UploadImagePayload", image: { filename: "overlay2.qcow2" } });
  });

  it.skipIf(!qemuInstalled)("checks the whole chain again at use: 409 naming the image, QEMU not started (requires QEMU)", async () => {
    // Put in the store by hand (not through an upload): a disk whose store-local backing file leads out.
    fs.writeFileSync(path.join(images, "mid.qcow2"), absolute);
    execFileSync(qemuImg!, ["create", "-q", "-f", "qcow2", "-u", "-F", "qcow2", "-b", "mid.qcow2", path.join(images, "top.qcow2"), "1M"]);
    fs.writeFileSync(path.join(images, "cd.iso"), protocol);
    const p = (await call(s.url, "POST", "/v2/projects", { name: `qi-${randomUUID().slice(0, 8)}` })).body;
    const create = (properties: object) =>
      call(s.url, "POST", `/v2/projects/${p.project_id}/nodes`, { name: "VM", node_type: "qemu", compute_id: "local", properties: { platform: "x86_64", ...properties } });
    for (const [properties, message] of [
      [{ hda_disk_image: "top.qcow2" }, `Image top.qcow2 (hda_disk_image) refers to backing file ${secret}, outside the image store`],
      [{ cdrom_image: "cd.iso" }, "Image cd.iso (cdrom_image) refers to backing file nbd:127.0.0.1:9, outside the image store"],
    ] as const) {
      const vm = await create(properties);
      expect(vm.status, vm.text).toBe(201);
      const r = await call(s.url, "POST", `/v2/projects/${p.project_id}/nodes/${vm.body.node_id}/start`);
      expect(r.status, r.text).toBe(409);
      expect(r.body.message).toBe(message);
      expect((await call(s.url, "GET", `/v2/projects/${p.project_id}/nodes/${vm.body.node_id}`)).body.status).toBe("stopped");
    }
  });

  it("refuses commas in image names: on upload and in the properties", async () => {
    for (const name of ["m,x", "m%2C%2Fetc%2Fshadow", "m,/abs/path"]) {
      const r = await post(s.url, `/v2/compute/qemu/images/${name}`, "payload!");
      expect(r.status, name).toBe(400);
    }
    expect(fs.readdirSync(images).filter((f) => f.includes(","))).toEqual([]);
    fs.writeFileSync(path.join(images, "m,x"), "placed by hand, more than seven bytes");
    const p = (await call(s.url, "POST", "/v2/projects", { name: `qc-${randomUUID().slice(0, 8)}` })).body;
    const r = await call(s.url, "POST", `/v2/projects/${p.project_id}/nodes`, {
      name: "VM", node_type: "qemu", compute_id: "local", properties: { initrd: "m,x" },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^initrd: .*no comma/);
  });
});
