import { describe, expect, it } from "vitest";
import { allocateNodeName } from "../../src/emulation/nodes/naming.js";
import { defaultPortsMapping, nodePorts } from "../../src/emulation/node-model/ports.js";

/** Port naming and node naming: pure functions of the stored node, no server. */
const node = (nodeType: string, properties: Record<string, unknown> = {}, format = "Ethernet{0}", segment = 0, first: string | null = null) => ({
  nodeType,
  properties,
  portNameFormat: format,
  portSegmentSize: segment,
  firstPortName: first,
});

describe("unit: node ports", () => {
  it("a vpcs has one port, Ethernet0 / e0", () => {
    expect(nodePorts(node("vpcs"))).toEqual([
      { name: "Ethernet0", short_name: "e0", adapter_number: 0, port_number: 0, link_type: "ethernet", data_link_types: { Ethernet: "DLT_EN10MB" } },
    ]);
  });

  it("switches and hubs list their ports_mapping (8 ports by default); clouds keep the mapping's names", () => {
    const sw = nodePorts(node("ethernet_switch", { ports_mapping: defaultPortsMapping("ethernet_switch") }));
    expect(sw.map((p) => [p.name, p.short_name, p.port_number])).toEqual(Array.from({ length: 8 }, (_, i) => [`Ethernet${i}`, `e${i}`, i]));
    expect(defaultPortsMapping("ethernet_hub", 2)).toEqual([
      { name: "Ethernet0", port_number: 0 },
      { name: "Ethernet1", port_number: 1 },
    ]);
    expect(defaultPortsMapping("vpcs")).toBeUndefined();
    const cloud = nodePorts(node("cloud", { ports_mapping: [{ name: "eth0", port_number: 0 }, { port_number: "bad" }] }));
    expect(cloud.map((p) => [p.name, p.short_name])).toEqual([["eth0", "eth0"]]);
  });

  it("adapters are named from the port name format: {0}, {port0}/{port1}, {segment0}/{segment1}", () => {
    const names = (format: string, adapters: number, segment = 0, first: string | null = null) =>
      nodePorts(node("qemu", { adapters }, format, segment, first)).map((p) => p.name);
    expect(names("Ethernet{0}", 3)).toEqual(["Ethernet0", "Ethernet1", "Ethernet2"]);
    expect(names("Gi{segment0}/{port0}", 5, 4)).toEqual(["Gi0/0", "Gi0/1", "Gi0/2", "Gi0/3", "Gi1/0"]);
    expect(names("eth{port1}", 2)).toEqual(["eth1", "eth2"]);
    expect(names("e{segment1}/{port1}", 3, 2)).toEqual(["e1/1", "e1/2", "e2/1"]);
    expect(names("Ethernet{0}", 2, 0, "mgmt0")).toEqual(["mgmt0", "Ethernet1"]);
    expect(nodePorts(node("qemu", {})).map((p) => [p.name, p.adapter_number])).toEqual([["Ethernet0", 0]]);
  });
});

describe("unit: node names", () => {
  it("keeps a free name, strips spaces, numbers a taken one, fills {0} / {id} templates", () => {
    const taken = new Set(["PC1", "PCy", "R1"]);
    expect(allocateNodeName("PC 7", taken)).toBe("PC7");
    expect(allocateNodeName("PC1", taken)).toBe("PC2");
    expect(allocateNodeName("PCy", taken)).toBe("PCy1");
    expect(allocateNodeName("R{0}", taken)).toBe("R2");
    expect(allocateNodeName("R{id}", new Set())).toBe("R1");
  });

  it("refuses an unknown replacement string", () => {
    expect(() => allocateNodeName("R{0}{x}", new Set())).toThrow("{x} is not a valid replacement string in the node name");
  });
});
