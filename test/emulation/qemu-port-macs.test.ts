import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { qemuInstalled } from "../support/qemu-guest.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

/**
 * The MAC of every qemu port (compat-qemu §5): base `0c:` + node id hex [2:4] [4:6] [6:8] + `:00:00`, adapter n =
 * base + n as a 48-bit integer; a `mac_address` property replaces the base, a custom adapter's MAC its adapter's.
 * Ports show it with their `adapter_type` (GNS3's StandardPortFactory), and QEMU's NICs get the same.
 */
const hasQemu = toolAvailable("qemu-system-x86_64", qemuInstalled());
const ETHERNET = { Ethernet: "DLT_EN10MB" };

describe("qemu node ports: mac_address and adapter_type", () => {
  let s: TestServer;
  let P: string;
  beforeAll(async () => {
    s = await startTestServer();
    P = `/v2/projects/${(await call(s.url, "POST", "/v2/projects", { name: "port-macs" })).body.project_id}`;
  });
  afterAll(() => s.close());

  const create = async (node_id: string, properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const r = await call(s.url, "POST", `${P}/nodes`, { name: "VM", node_type: "qemu", compute_id: "local", node_id, properties: { platform: "x86_64", ...properties }, ...extra });
    expect(r.status, r.text).toBe(201);
    return r.body;
  };

  it("each adapter's port has the base MAC from the node id plus its number, and the adapter type", async () => {
    const vm = await create("e7a3f521-6b0c-4c1d-8e2f-4a5b6c7d8e90", { adapters: 3 });
    expect(vm.properties.mac_address).toBe("0c:a3:f5:21:00:00");
    expect(vm.ports).toEqual([0, 1, 2].map((n) => ({
      adapter_number: n,
      port_number: 0,
      name: `Ethernet${n}`,
      short_name: `e${n}`,
      link_type: "ethernet",
      data_link_types: ETHERNET,
      adapter_type: "e1000",
      mac_address: `0c:a3:f5:21:00:0${n}`,
    })));
    // The same in the node list, the node.* events' object and a node read alone.
    expect((await call(s.url, "GET", `${P}/nodes/${vm.node_id}`)).body.ports).toEqual(vm.ports);
  });

  it("mac_address moves the base (adding carries across bytes); a custom adapter's MAC, type and name win for its port", async () => {
    const vm = await create("0b1c2d3e-0000-4000-8000-000000000001", { adapters: 4, mac_address: "0C:AA:BB:CC:DD:FE", adapter_type: "virtio-net-pci" }, {
      custom_adapters: [{ adapter_number: 2, port_name: "mgmt", adapter_type: "e1000", mac_address: "02:11:22:33:44:55" }],
    });
    expect(vm.ports.map((p: any) => [p.name, p.adapter_type, p.mac_address])).toEqual([
      ["Ethernet0", "virtio-net-pci", "0c:aa:bb:cc:dd:fe"],
      ["Ethernet1", "virtio-net-pci", "0c:aa:bb:cc:dd:ff"],
      ["mgmt", "e1000", "02:11:22:33:44:55"],
      ["Ethernet3", "virtio-net-pci", "0c:aa:bb:cc:de:01"],
    ]);
    const changed = await call(s.url, "PUT", `${P}/nodes/${vm.node_id}`, { properties: { mac_address: "" }, custom_adapters: [] });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.ports.map((p: any) => [p.name, p.mac_address])).toEqual([
      ["Ethernet0", "0c:1c:2d:3e:00:00"],
      ["Ethernet1", "0c:1c:2d:3e:00:01"],
      ["Ethernet2", "0c:1c:2d:3e:00:02"],
      ["Ethernet3", "0c:1c:2d:3e:00:03"],
    ]);
  });

  it("a node from a qemu template and a duplicate get their own MACs; vpcs ports carry none (as upstream)", async () => {
    const t = await call(s.url, "POST", "/v2/templates", { name: "macs", template_type: "qemu", compute_id: "local", platform: "x86_64", adapters: 2 });
    const node = (await call(s.url, "POST", `${P}/templates/${t.body.template_id}`, { x: 0, y: 0 })).body;
    const hex = node.node_id.replaceAll("-", "");
    const base = `0c:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
    expect(node.ports.map((p: any) => p.mac_address)).toEqual([`${base}:00:00`, `${base}:00:01`]);
    const copy = (await call(s.url, "POST", `${P}/nodes/${node.node_id}/duplicate`, { x: 1, y: 1 })).body;
    const copyHex = copy.node_id.replaceAll("-", "");
    expect(copy.ports[0].mac_address).toBe(`0c:${copyHex.slice(2, 4)}:${copyHex.slice(4, 6)}:${copyHex.slice(6, 8)}:00:00`);

    const pc = (await call(s.url, "POST", `${P}/nodes`, { name: "PC", node_type: "vpcs", compute_id: "local" })).body;
    expect(Object.keys(pc.ports[0]).sort()).toEqual(["adapter_number", "data_link_types", "link_type", "name", "port_number", "short_name"]);
  });

  it("GraphQL ports carry macAddress and adapterType", async () => {
    const vm = await create("5a6b7c8d-0000-4000-8000-000000000002", { adapters: 2 });
    const r = await gql(
      s.url,
      `query($id: ID!) { emulatedNode(id: $id) { ... on EmulatedNode { ports { name macAddress adapterType } } } }`,
      { id: vm.node_id },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.emulatedNode.ports).toEqual([
      { name: "Ethernet0", macAddress: "0c:6b:7c:8d:00:00", adapterType: "e1000" },
      { name: "Ethernet1", macAddress: "0c:6b:7c:8d:00:01", adapterType: "e1000" },
    ]);
  });

  it.skipIf(!hasQemu)("QEMU's NICs get the ports' MACs and types (requires qemu-system-x86_64)", async () => {
    // No disk: the firmware finds nothing to boot and waits, which is all a command line needs.
    const vm = await create("c0ffee00-0000-4000-8000-000000000003", { adapters: 3, ram: 64, options: "-machine accel=tcg" }, {
      custom_adapters: [{ adapter_number: 1, adapter_type: "virtio-net-pci", mac_address: "02:00:00:00:00:99" }],
    });
    const started = await call(s.url, "POST", `${P}/nodes/${vm.node_id}/start`);
    try {
      expect(started.body.status, started.text).toBe("started");
      const devices = [...started.body.command_line.matchAll(/-device (\S+?),mac=([0-9a-f:]+)\S*,netdev=gns3-(\d+)/g)].map((m) => [Number(m[3]), m[1], m[2]]);
      expect(devices).toEqual(vm.ports.map((p: any) => [p.adapter_number, p.adapter_type, p.mac_address]));
      expect(devices.map((d) => d[2])).toEqual(["0c:ff:ee:00:00:00", "02:00:00:00:00:99", "0c:ff:ee:00:00:02"]);
    } finally {
      await call(s.url, "POST", `${P}/nodes/${vm.node_id}/stop`);
    }
  }, 60_000);
});
