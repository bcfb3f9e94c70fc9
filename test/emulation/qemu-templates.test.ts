import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findOnPath } from "../../src/platform/core/executables.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";

/**
 * qemu templates (the GUI's "New template" flow: a full template body with a client-made id, gns3-gui-compat
 * "Templates") and nodes made from them (compat-qemu §2: the template's settings become node properties, images
 * checked, GNS3's template defaults).
 */
const qemuInstalled = findOnPath("qemu-system-x86_64") !== null;
const DISK = Buffer.from("a qcow2 disk, as far as this test is concerned");

/** What the GUI 2.2 wizard posts for a new QEMU VM template (every key, legacy integer category). */
const guiTemplate = (id: string) => ({
  template_id: id,
  template_type: "qemu",
  compute_id: "local",
  builtin: false,
  name: "Debian",
  category: 2,
  symbol: ":/symbols/qemu_guest.svg",
  default_name_format: "{name}-{0}",
  usage: "log in as root",
  qemu_path: "/usr/bin/qemu-system-x86_64",
  platform: "",
  ram: 512,
  cpus: 1,
  adapters: 2,
  adapter_type: "virtio-net-pci",
  mac_address: "",
  first_port_name: "",
  port_name_format: "eth{0}",
  port_segment_size: 0,
  console_type: "telnet",
  console_auto_start: false,
  boot_priority: "c",
  hda_disk_image: "debian.qcow2",
  hda_disk_interface: "virtio",
  hdb_disk_image: "",
  hdb_disk_interface: "none",
  hdc_disk_image: "",
  hdc_disk_interface: "none",
  hdd_disk_image: "",
  hdd_disk_interface: "none",
  cdrom_image: "",
  initrd: "",
  kernel_image: "",
  bios_image: "",
  kernel_command_line: "",
  legacy_networking: false,
  replicate_network_connection_state: true,
  on_close: "power_off",
  cpu_throttling: 0,
  process_priority: "normal",
  options: "-no-kvm -nographic",
  linked_clone: true,
  custom_adapters: [],
});

describe("qemu templates", () => {
  let s: TestServer;
  let P: string;

  beforeAll(async () => {
    s = await startTestServer();
    fs.mkdirSync(path.join(s.dataDir, "images", "QEMU"), { recursive: true });
    fs.writeFileSync(path.join(s.dataDir, "images", "QEMU", "debian.qcow2"), DISK);
  });
  afterAll(() => s?.close());
  beforeEach(async () => {
    const p = await call(s.url, "POST", "/v2/projects", { name: `qt-${randomUUID().slice(0, 8)}` });
    P = `/v2/projects/${p.body.project_id}`;
  });

  it("keeps the GUI wizard's template as sent (category as a name), defaults for the keys it leaves out", async () => {
    const id = randomUUID();
    const r = await call(s.url, "POST", "/v2/templates", guiTemplate(id));
    expect(r.status, r.text).toBe(201);
    expect(r.body).toEqual({ ...guiTemplate(id), category: "guest", maxcpus: 1, tpm: false, uefi: false, create_config_disk: false });
    expect((await call(s.url, "GET", `/v2/templates/${id}`)).body).toEqual(r.body);
  });

  it("fills GNS3's qemu template defaults", async () => {
    const r = await call(s.url, "POST", "/v2/templates", { name: "Minimal", template_type: "qemu", compute_id: "local" });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toEqual({
      template_id: expect.any(String),
      template_type: "qemu",
      name: "Minimal",
      compute_id: "local",
      builtin: false,
      category: "guest",
      symbol: ":/symbols/qemu_guest.svg",
      default_name_format: "{name}-{0}",
      usage: "",
      qemu_path: "",
      ram: 256,
      cpus: 1,
      maxcpus: 1,
      adapters: 1,
      adapter_type: "e1000",
      mac_address: "",
      first_port_name: "",
      port_name_format: "Ethernet{0}",
      port_segment_size: 0,
      console_type: "telnet",
      console_auto_start: false,
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
      kernel_image: "",
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
      process_priority: "normal",
      custom_adapters: [],
    });
  });

  it("refuses bad settings with GNS3's jsonschema-worded 400, on create and update", async () => {
    const bad: Record<string, unknown>[] = [
      { ram: "lots" },
      { ram: 0 },
      { console_type: "vnc" },
      { adapter_type: "e1000,romfile=/etc/shadow" },
      { options: "-drive file=/etc/passwd" },
      { options: "-incoming exec:sh" },
      { hda_disk_image: "../../etc/passwd" },
      { qemu_path: "/bin/sh" },
      { toaster: 1 },
      { custom_adapters: [{ adapter_number: 0, adapter_type: "x,romfile=y" }] },
    ];
    for (const extra of bad) {
      const r = await call(s.url, "POST", "/v2/templates", { name: "Bad", template_type: "qemu", compute_id: "local", ...extra });
      expect(r.status, `${JSON.stringify(extra)}: ${r.text}`).toBe(400);
      expect(r.body.message).toMatch(/^JSON schema error with API request/);
    }
    const t = (await call(s.url, "POST", "/v2/templates", { name: "Good", template_type: "qemu", compute_id: "local" })).body;
    expect((await call(s.url, "PUT", `/v2/templates/${t.template_id}`, { options: "-kernel /boot/vmlinuz" })).status).toBe(400);
    expect((await call(s.url, "PUT", `/v2/templates/${t.template_id}`, { ram: 1024 })).body.ram).toBe(1024);
  });

  it.skipIf(!qemuInstalled)("makes nodes from a template: its settings as node properties, images checked (requires QEMU)", async () => {
    const t = (await call(s.url, "POST", "/v2/templates", guiTemplate(randomUUID()))).body;
    const r = await call(s.url, "POST", `${P}/templates/${t.template_id}`, { x: 10, y: 20 });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ name: "Debian-1", node_type: "qemu", compute_id: "local", template_id: t.template_id, console_type: "telnet" });
    expect(r.body.properties).toMatchObject({
      qemu_path: "/usr/bin/qemu-system-x86_64",
      ram: 512,
      adapters: 2,
      adapter_type: "virtio-net-pci",
      hda_disk_image: "debian.qcow2",
      hda_disk_interface: "virtio",
      hda_disk_image_md5sum: createHash("md5").update(DISK).digest("hex"),
      options: "-machine accel=tcg -nographic",
      process_priority: "normal",
      usage: "log in as root",
      mac_address: expect.stringMatching(/^0c:[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}:00:00$/),
    });
    expect(r.body.properties).not.toHaveProperty("name");
    expect(r.body.ports.map((p: any) => p.name)).toEqual(["eth0", "eth1"]);
    // The next node gets the next name and its own MAC.
    const second = await call(s.url, "POST", `${P}/templates/${t.template_id}`, { x: 30, y: 20 });
    expect(second.body.name).toBe("Debian-2");
    expect(second.body.properties.mac_address).not.toBe(r.body.properties.mac_address);

    // GraphQL's createNodeFromTemplate is the same operation.
    const gq = await gql(
      s.url,
      `mutation($p: ID!, $t: ID!) { createNodeFromTemplate(input: { projectId: $p, templateId: $t, x: 1, y: 2 }) {
        __typename ... on CreateNodeFromTemplatePayload { node { name settings { ... on QemuSettings { ramMb disks { name } } } } } } }`,
      { p: P.split("/")[3], t: t.template_id },
    );
    expect(gq.data.createNodeFromTemplate.node).toEqual({ name: "Debian-3", settings: { ramMb: 512, disks: [{ name: "debian.qcow2" }] } });
  });

  it.skipIf(!qemuInstalled)("answers 409 naming the template's missing image, and makes no node (requires QEMU)", async () => {
    const t = (await call(s.url, "POST", "/v2/templates", { ...guiTemplate(randomUUID()), name: "Gone", hda_disk_image: "gone.qcow2" })).body;
    const r = await call(s.url, "POST", `${P}/templates/${t.template_id}`, { x: 0, y: 0 });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ message: "The image gone.qcow2 is missing", status: 409 });
    expect((await call(s.url, "GET", `${P}/nodes`)).body).toEqual([]);
  });

  it.skipIf(qemuInstalled)("refuses a qemu node from a template where QEMU is not installed (capabilities do not list qemu)", async () => {
    const t = (await call(s.url, "POST", "/v2/templates", guiTemplate(randomUUID()))).body;
    const r = await call(s.url, "POST", `${P}/templates/${t.template_id}`, { x: 0, y: 0 });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/cannot run qemu nodes/);
  });
});
