import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { postBytes, zip } from "./archive-support.js";

/**
 * Issue 19, point 1: a qemu node's `options` are checked the way QEMU reads them — placeholders expanded with the
 * node's own values first (at set, rename, from a template, and again at start), every comma part of a sub-option
 * list, every `driver=`/`qom-type=`, device drivers / object types / machine keys from allow-lists — and memory
 * backends count towards the RAM cap.
 */
const RECORD = "-icount shift=auto,rr=record,rrfile=%vm-name%";

describe("qemu options, checked as QEMU reads them", () => {
  let s: TestServer;
  let P: string;
  let projectId: string;
  /** A host directory the options must never reach; `${victim}/f` is the file QEMU would create. */
  const victim = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-victim-"));
  const target = path.join(victim, "f");

  beforeAll(async () => {
    s = await startTestServer({ vmMemoryLimit: 1024 });
  });
  afterAll(async () => {
    await s?.close();
    fs.rmSync(victim, { recursive: true, force: true });
  });
  beforeEach(async () => {
    const p = await call(s.url, "POST", "/v2/projects", { name: `qo-${randomUUID().slice(0, 8)}` });
    projectId = p.body.project_id;
    P = `/v2/projects/${projectId}`;
  });
  afterEach(() => expect(fs.existsSync(target)).toBe(false));

  const create = (name: string, options: string, extra: Record<string, unknown> = {}) =>
    call(s.url, "POST", `${P}/nodes`, { name, node_type: "qemu", compute_id: "local", properties: { platform: "x86_64", options, ...extra } });
  const nodes = async () => (await call(s.url, "GET", `${P}/nodes`)).body;

  it("checks options with the node's own name: at create, at rename (REST and GraphQL), comma injection too", async () => {
    const bad = await create(target, RECORD);
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.message).toBe(`options: Forbidden additional option: -icount shift=auto,rr=record,rrfile=${target}`);
    // A name that adds a sub-option is read as QEMU reads it.
    const injected = await create("a,driver=vhost-vsock-pci", "-device e1000,id=%vm-name%");
    expect(injected.status, injected.text).toBe(400);
    expect(injected.body.message).toMatch(/^options: Forbidden additional option: -device e1000,id=a,driver=vhost-vsock-pci$/);
    expect(await nodes()).toEqual([]);

    const vm = await create("VM", RECORD);
    expect(vm.status, vm.text).toBe(201);
    const N = `${P}/nodes/${vm.body.node_id}`;
    const rename = await call(s.url, "PUT", N, { name: target });
    expect(rename.status, rename.text).toBe(400);
    expect(rename.body.message).toMatch(/^options: Forbidden additional option: -icount .*rrfile=\//);
    const gqRename = await gql(
      s.url,
      `mutation($id: ID!, $name: String!) { updateNode(input: { id: $id, name: $name }) { __typename ... on Error { message } } }`,
      { id: vm.body.node_id, name: target },
    );
    expect(gqRename.data.updateNode).toEqual({ __typename: "InvalidInputError", message: expect.stringMatching(/^options: Forbidden additional option: -icount/) });
    // A new name and new options in one update are checked together; a harmless rename still works.
    expect((await call(s.url, "PUT", N, { name: target, properties: { options: "-nographic" } })).status).toBe(200);
    expect((await call(s.url, "PUT", N, { properties: { options: RECORD } })).status).toBe(400);
    expect((await call(s.url, "PUT", N, { name: "VM2" })).status).toBe(200);
    expect((await call(s.url, "GET", N)).body.properties.options).toBe("-nographic");
  });

  it("checks a template's options with the name its default_name_format gives (REST and GraphQL)", async () => {
    const t = await call(s.url, "POST", "/v2/templates", {
      name: "rr", template_type: "qemu", compute_id: "local", platform: "x86_64", options: RECORD, default_name_format: `${victim}/f{0}`,
    });
    expect(t.status, t.text).toBe(201);
    const r = await call(s.url, "POST", `${P}/templates/${t.body.template_id}`, { x: 0, y: 0 });
    expect(r.status, r.text).toBe(400);
    expect(r.body.message).toBe(`options: Forbidden additional option: -icount shift=auto,rr=record,rrfile=${victim}/f1`);
    const gq = await gql(
      s.url,
      `mutation($p: ID!, $t: ID!) { createNodeFromTemplate(input: { projectId: $p, templateId: $t, x: 1, y: 2 }) { __typename ... on Error { message } } }`,
      { p: projectId, t: t.body.template_id },
    );
    expect(gq.data.createNodeFromTemplate.__typename).toBe("InvalidInputError");
    expect(await nodes()).toEqual([]);
  });

  it("checks the expanded options again at start: an imported node answers 409 and QEMU is never run", async () => {
    const nodeId = randomUUID();
    const topology = {
      project_id: randomUUID(), name: "imported", type: "topology", revision: 9, version: "2.2.59",
      topology: {
        computes: [], links: [], drawings: [],
        nodes: [{
          node_id: nodeId, name: target, node_type: "qemu", compute_id: "local", console: null, console_type: "none",
          x: 0, y: 0, z: 1, properties: { platform: "x86_64", options: RECORD },
        }],
      },
    };
    const id = randomUUID();
    const imported = await postBytes(s.url, `/v2/projects/${id}/import?name=imp-${id.slice(0, 8)}`, await zip({ "project.gns3": JSON.stringify(topology) }));
    expect(imported.status, imported.text).toBe(201);
    expect((await call(s.url, "POST", `/v2/projects/${id}/open`)).status).toBe(201);
    const [node] = (await call(s.url, "GET", `/v2/projects/${id}/nodes`)).body;
    expect(node.name).toBe(target);
    const start = await call(s.url, "POST", `/v2/projects/${id}/nodes/${node.node_id}/start`);
    expect(start.status, start.text).toBe(409);
    expect(start.body.message).toBe(`Forbidden additional option: -icount shift=auto,rr=record,rrfile=${target}`);
    expect((await call(s.url, "GET", `/v2/projects/${id}/nodes/${node.node_id}`)).body.status).toBe("stopped");
  });

  it("reads every comma part, every driver= and qom-type=, and refuses what still reaches the host", async () => {
    const refused = [
      "-device id=x,driver=vhost-vsock-pci",
      "-device e1000,driver=vhost-vsock-pci",
      "-object id=m,qom-type=memory-backend-memfd,size=1M",
      "-object rng-builtin,id=r,qom-type=memory-backend-file",
      "-device e1000,,romfile=x", // `,,` is a literal comma: the driver is "e1000,romfile=x"
      "-object input-barrier,id=b,name=x,server=evil.example",
      "-device usb-mtp,rootdir=..,readonly=off",
      "-device guest-loader,kernel=vmlinuz,addr=0x1000",
      "-device guest-loader,initrd=x,addr=0x1000",
      "-machine pc,initrd=x",
      "-machine pc,firmware=x",
      "-machine kernel=x",
      "-machine pc,dtb=x",
      "-M pc,dumpdtb=x",
      "-machine pc,memory-backend=m",
      "-machine pc,memory.size=64G",
      "-global driver=e1000,property=romfile,value=x",
      "-boot splash=x",
      "-smbios file=x",
      "-usbdevice braille",
      "-object memory-backend-ram,id=m,size=lots",
      "-name %project-path%",
    ];
    for (const options of refused) {
      const r = await create("VM", options);
      expect(r.status, `${options}: ${r.text}`).toBe(400);
      expect(r.body.message).toMatch(/^options: Forbidden additional option/);
    }
    expect(await nodes()).toEqual([]);
    const gq = await gql(
      s.url,
      `mutation($input: CreateNodeInput!) { createNode(input: $input) { __typename ... on Error { message } } }`,
      { input: { projectId, name: "G", nodeType: "QEMU", settings: { qemu: { options: "-object id=m,qom-type=memory-backend-memfd,size=1M" } } } },
    );
    expect(gq.data.createNode).toEqual({ __typename: "InvalidInputError", message: expect.stringMatching(/Forbidden additional option: -object/) });

    const accepted = [
      "-device e1000,romfile=",
      "-global e1000.romfile=",
      "-object rng-builtin,id=r -device virtio-rng-pci,rng=r",
      "-machine pc,usb=off,smm=off,accel=tcg,dump-guest-core=off",
      "-device i6300esb -watchdog-action reset",
      "-device pci-bridge,id=b,chassis_nr=1 -device usb-tablet -usb",
      "-name VM,,1 -icount shift=auto,rr=record,rrfile=replay.bin",
    ];
    for (const options of accepted) expect((await create("VM", options)).status, options).toBe(201);
  });

  it("counts memory backends and video memory into the RAM the cap sees", async () => {
    const vm = await create("VM", "-object memory-backend-ram,id=m,size=64G,prealloc=on", { ram: 256 });
    expect(vm.status, vm.text).toBe(201);
    const r = await call(s.url, "POST", `${P}/nodes/${vm.body.node_id}/start`);
    expect(r.status, r.text).toBe(409);
    expect(r.body.message).toBe(
      "Cannot start VM: it needs 65792 MB of RAM and the running VMs of this compute already use 0 of the 1024 MB allowed (--vm-memory-limit)",
    );
    const vram = await create("VM2", "-device VGA,vgamem_mb=256 ".repeat(4), { ram: 256 });
    expect(vram.status, vram.text).toBe(201);
    const r2 = await call(s.url, "POST", `${P}/nodes/${vram.body.node_id}/start`);
    expect(r2.status, r2.text).toBe(409);
    expect(r2.body.message).toMatch(/^Cannot start VM2: it needs 1280 MB of RAM/);
  });
});
