import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findOnPath } from "../../src/platform/core/executables.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";

/**
 * The qemu node's properties through the controller API (compat-qemu §2, §5, §9): GNS3's defaults, validation of
 * every field that reaches a qemu command line, images resolved in <data dir>/images/QEMU, md5 echoes.
 */
describe("qemu node properties", () => {
  let s: TestServer;
  let P: string;
  const kernel = Buffer.from("not really a bzImage, but more than seven bytes");
  const md5 = (b: Buffer) => createHash("md5").update(b).digest("hex");

  beforeAll(async () => {
    s = await startTestServer();
    const dir = path.join(s.dataDir, "images", "QEMU");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "vmlinuz"), kernel);
  });
  afterAll(() => s?.close());
  beforeEach(async () => {
    const p = await call(s.url, "POST", "/v2/projects", { name: `qp-${randomUUID().slice(0, 8)}` });
    P = `/v2/projects/${p.body.project_id}`;
  });

  const create = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    call(s.url, "POST", `${P}/nodes`, { name: "VM", node_type: "qemu", compute_id: "local", properties, ...extra });
  const nodeCount = async () => (await call(s.url, "GET", `${P}/nodes`)).body.length;

  it("fills GNS3's defaults, derives the MAC from the node id and echoes image md5s", async () => {
    const id = "e7a3f521-0000-4000-8000-000000000001".replace("0000-4000", randomUUID().slice(9, 18));
    const r = await create({ platform: "x86_64", kernel_image: "vmlinuz" }, { node_id: id });
    expect(r.status, r.text).toBe(201);
    expect(r.body.console_type).toBe("telnet");
    expect(typeof r.body.console).toBe("number");
    expect(r.body.properties).toEqual({
      qemu_path: "",
      platform: "x86_64",
      ram: 256,
      cpus: 1,
      maxcpus: 1,
      adapters: 1,
      adapter_type: "e1000",
      mac_address: "0c:a3:f5:21:00:00",
      boot_priority: "c",
      hda_disk_image: "",
      hdb_disk_image: "",
      hdc_disk_image: "",
      hdd_disk_image: "",
      hda_disk_interface: "none",
      hdb_disk_interface: "none",
      hdc_disk_interface: "none",
      hdd_disk_interface: "none",
      cdrom_image: "",
      bios_image: "",
      initrd: "",
      kernel_image: "vmlinuz",
      kernel_command_line: "",
      options: "",
      linked_clone: true,
      legacy_networking: false,
      replicate_network_connection_state: true,
      tpm: false,
      uefi: false,
      create_config_disk: false,
      on_close: "power_off",
      cpu_throttling: 0,
      process_priority: "low",
      usage: "",
      hda_disk_image_md5sum: null,
      hdb_disk_image_md5sum: null,
      hdc_disk_image_md5sum: null,
      hdd_disk_image_md5sum: null,
      cdrom_image_md5sum: null,
      bios_image_md5sum: null,
      initrd_md5sum: null,
      kernel_image_md5sum: md5(kernel),
    });
    expect(r.body.ports.map((p: any) => p.name)).toEqual(["Ethernet0"]);
    // Stored as returned: a GET and the node list say the same.
    expect((await call(s.url, "GET", `${P}/nodes/${id}`)).body.properties).toEqual(r.body.properties);
  });

  it("refuses bad values with a 400 naming the field, and creates nothing", async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ram: "lots" }, /ram/],
      [{ ram: 0 }, /ram/],
      [{ ram: 1.5 }, /ram/],
      [{ ram: 10_000_000 }, /ram/],
      [{ cpus: 0 }, /cpus/],
      [{ adapters: 276 }, /adapters/],
      [{ adapter_type: "e1000,romfile=/etc/shadow" }, /adapter_type/],
      [{ mac_address: "0c:00:00:00:00" }, /mac_address/],
      [{ on_close: "explode" }, /on_close/],
      [{ boot_priority: "x" }, /boot_priority/],
      [{ hda_disk_interface: "usb" }, /hda_disk_interface/],
      [{ qemu_path: "/bin/sh" }, /qemu_path/],
      [{ kernel_image: "../../etc/passwd" }, /kernel_image/],
      [{ hda_disk_image: "/etc/passwd" }, /hda_disk_image/],
      [{ initrd: ".hidden" }, /initrd/],
      [{ bios_image: "a\\b" }, /bios_image/],
      [{ toaster: true }, /toaster/],
    ];
    for (const [properties, field] of bad) {
      const r = await create(properties);
      expect(r.status, `${JSON.stringify(properties)}: ${r.text}`).toBe(400);
      expect(r.body.message).toMatch(field);
    }
    const proto = `{"name": "VM", "node_type": "qemu", "compute_id": "local", "properties": {"__proto__": {"ram": 1}}}`;
    expect((await call(s.url, "POST", `${P}/nodes`, proto)).status).toBe(400);
    const vnc = await create({}, { console_type: "vnc" });
    expect(vnc.status).toBe(400);
    expect(vnc.body.message).toMatch(/Console type vnc is not supported by qemu nodes/);
    const adapters = await create({}, { custom_adapters: [{ adapter_number: 0, adapter_type: "e1000,romfile=x" }] });
    expect(adapters.status).toBe(400);
    expect(await nodeCount()).toBe(0);
  });

  it("refuses options that would reach the host, and rewrites GNS3's acceleration switches", async () => {
    const escapes = [
      "-drive file=/etc/passwd,format=raw",
      "--drive file=x",
      "-hda /etc/shadow",
      "-kernel /boot/vmlinuz",
      "-netdev tap,id=t,script=/tmp/x.sh",
      "-incoming exec:touch /tmp/pwned",
      "-chardev file,id=c,path=/tmp/x",
      "-serial file:/tmp/x",
      "-monitor unix:/tmp/m,server",
      "-pidfile /tmp/pid",
      "-readconfig /etc/passwd",
      "-device loader,file=/etc/passwd",
      "-device e1000,romfile=/etc/shadow",
      "-device vfio-pci,host=01:00.0",
      "-global virtio-net-pci.romfile=x",
      `-device '{"driver":"loader","file":"x"}'`,
      "-object memory-backend-file,id=m,mem-path=x,size=1M",
      "-m 65536",
      "disk.qcow2",
      "-display vnc=unix:x",
      '-machine "accel=tcg',
    ];
    for (const options of escapes) {
      const r = await create({ options });
      expect(r.status, `${options}: ${r.text}`).toBe(400);
      expect(r.body.message).toMatch(/^options: (Forbidden additional option|No closing quotation)/);
    }
    expect(await nodeCount()).toBe(0);

    const ok = await create({ options: "-no-kvm -nographic -cpu qemu64 -device virtio-rng-pci -name %vm-name%" });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.properties.options).toBe("-machine accel=tcg -nographic -cpu qemu64 -device virtio-rng-pci -name %vm-name%");
  });

  it("answers 409 naming a missing image, and creates nothing (also on update)", async () => {
    const r = await create({ platform: "x86_64", hda_disk_image: "nope.qcow2" });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ message: "The image nope.qcow2 is missing", status: 409 });
    expect(await nodeCount()).toBe(0);

    const vm = await create({ platform: "x86_64" });
    const put = await call(s.url, "PUT", `${P}/nodes/${vm.body.node_id}`, { properties: { initrd: "initrd.gz" } });
    expect(put.status).toBe(409);
    expect(put.body.message).toBe("The image initrd.gz is missing");
    expect((await call(s.url, "GET", `${P}/nodes/${vm.body.node_id}`)).body.properties.initrd).toBe("");
  });

  it.skipIf(!findOnPath("qemu-system-x86_64"))("answers 409 naming an image removed since the node was set, at start (requires QEMU)", async () => {
    const dir = path.join(s.dataDir, "images", "QEMU");
    fs.writeFileSync(path.join(dir, "short-lived.img"), "gone before the start");
    const vm = await create({ platform: "x86_64", initrd: "short-lived.img" });
    expect(vm.status, vm.text).toBe(201);
    fs.rmSync(path.join(dir, "short-lived.img"));
    const r = await call(s.url, "POST", `${P}/nodes/${vm.body.node_id}/start`);
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/^The image short-lived\.img is missing/);
    expect((await call(s.url, "GET", `${P}/nodes/${vm.body.node_id}`)).body.status).toBe("stopped");
  });

  it("merges updates into the stored properties and re-checks them", async () => {
    const vm = (await create({ platform: "x86_64", ram: 128, mac_address: "0C:11:22:33:44:55" })).body;
    expect(vm.properties.mac_address).toBe("0C:11:22:33:44:55");
    const N = `${P}/nodes/${vm.node_id}`;
    const put = await call(s.url, "PUT", N, { properties: { cpus: 2, kernel_image: "vmlinuz", adapters: 3 } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.properties).toMatchObject({ ram: 128, cpus: 2, platform: "x86_64", kernel_image: "vmlinuz", kernel_image_md5sum: md5(kernel) });
    expect(put.body.ports.map((p: any) => p.name)).toEqual(["Ethernet0", "Ethernet1", "Ethernet2"]);
    // The GUI sends back what it read (md5 echoes included) and, with a move, an empty properties object.
    expect((await call(s.url, "PUT", N, { properties: put.body.properties })).status).toBe(200);
    const forged = await call(s.url, "PUT", N, { properties: { kernel_image_md5sum: "0".repeat(32), initrd_md5sum: "1".repeat(32) } });
    expect(forged.body.properties).toMatchObject({ kernel_image_md5sum: md5(kernel), initrd_md5sum: null });
    expect((await call(s.url, "PUT", N, { x: 10, y: 20, properties: {} })).body.properties).toEqual(put.body.properties);
    const bad = await call(s.url, "PUT", N, { properties: { ram: -1 } });
    expect(bad.status).toBe(400);
    expect((await call(s.url, "PUT", N, { properties: { options: "-drive file=/etc/passwd" } })).status).toBe(400);
    expect((await call(s.url, "GET", N)).body.properties).toEqual(put.body.properties);
  });

  it("GraphQL createNode meets the same rules as typed errors", async () => {
    const projectId = P.split("/")[3];
    const mutation = `mutation($input: CreateNodeInput!) { createNode(input: $input) {
      __typename ... on CreateNodePayload { node { nodeId properties } } ... on Error { message } } }`;
    const bad = await gql(s.url, mutation, { input: { projectId, name: "G", nodeType: "QEMU", settings: { qemu: { options: "-drive file=/etc/passwd" } } } });
    expect(bad.data.createNode).toEqual({ __typename: "InvalidInputError", message: expect.stringMatching(/Forbidden additional option: -drive/) });
    const missing = await gql(s.url, mutation, { input: { projectId, name: "G", nodeType: "QEMU", settings: { qemu: { cdromImage: "x.iso" } } } });
    expect(missing.data.createNode).toMatchObject({ __typename: "ConflictError", message: "The image x.iso is missing" });
    const ok = await gql(s.url, mutation, { input: { projectId, name: "G", nodeType: "QEMU", settings: { qemu: { ramMb: 512 } } } });
    expect(ok.data.createNode.node.properties).toMatchObject({ ram: 512, adapter_type: "e1000" });
  });
});
