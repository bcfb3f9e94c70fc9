import { nodeAdapter, readCustomAdapters, type AdapterSource } from "./adapters.js";

/**
 * The ports a node exposes, derived from its type and properties (GNS3 computes them on the compute side;
 * here they are a pure function of the stored node, so nothing can drift).
 */
export interface NodePort {
  name: string;
  short_name: string;
  adapter_number: number;
  port_number: number;
  link_type: "ethernet" | "serial";
  data_link_types: Record<string, string>;
  /** Adapter ports only, when known (GNS3 leaves the keys out otherwise). */
  adapter_type?: string;
  mac_address?: string;
}

interface PortSource extends AdapterSource {
  portNameFormat: string;
  portSegmentSize: number;
  firstPortName: string | null;
  /** The stored `custom_adapters` (JSON). */
  customAdapters?: string;
}

const ETHERNET = { Ethernet: "DLT_EN10MB" };
const DEFAULT_SWITCH_PORTS = 8;

const ethernet = (name: string, shortName: string, adapter: number, port: number): NodePort => ({
  name,
  short_name: shortName,
  adapter_number: adapter,
  port_number: port,
  link_type: "ethernet",
  data_link_types: ETHERNET,
});

/** Builtins whose ports are listed in `properties.ports_mapping` (adapter 0, one port per entry). */
const MAPPED_PORT_TYPES = new Set(["ethernet_switch", "ethernet_hub", "cloud", "nat"]);

export function defaultPortsMapping(nodeType: string, count = DEFAULT_SWITCH_PORTS): object[] | undefined {
  if (nodeType === "ethernet_switch") {
    return Array.from({ length: count }, (_, i) => ({ name: `Ethernet${i}`, port_number: i, type: "access", vlan: 1 }));
  }
  if (nodeType === "ethernet_hub") return Array.from({ length: count }, (_, i) => ({ name: `Ethernet${i}`, port_number: i }));
  return undefined;
}

/** `Ethernet{0}`, `eth{port0}`, `Ethernet{segment0}/{port0}` (IOU style) → the name of interface n. */
function formatPortName(fmt: string, index: number, segmentSize: number): string {
  const segment = segmentSize > 0 ? Math.floor(index / segmentSize) : 0;
  const port = segmentSize > 0 ? index % segmentSize : index;
  return fmt
    .replaceAll("{0}", String(index))
    .replaceAll("{port0}", String(port))
    .replaceAll("{port1}", String(port + 1))
    .replaceAll("{segment0}", String(segment))
    .replaceAll("{segment1}", String(segment + 1));
}

export function nodePorts(node: PortSource): NodePort[] {
  const { nodeType, properties } = node;
  if (nodeType === "vpcs" || nodeType === "traceng") return [ethernet("Ethernet0", "e0", 0, 0)];
  if (MAPPED_PORT_TYPES.has(nodeType)) {
    const mapping = Array.isArray(properties.ports_mapping) ? (properties.ports_mapping as { name?: unknown; port_number?: unknown }[]) : [];
    const builtin = nodeType === "ethernet_switch" || nodeType === "ethernet_hub";
    return mapping
      .filter((m) => typeof m?.port_number === "number")
      .map((m) => {
        const name = typeof m.name === "string" ? m.name : `Ethernet${m.port_number}`;
        return ethernet(name, builtin ? `e${m.port_number}` : name, 0, m.port_number as number);
      });
  }
  // Emulators with network adapters: one single-port adapter each, named from the port name format unless a
  // custom adapter names it, with the adapter's type and MAC (a qemu node's: base MAC + adapter number).
  const adapters = typeof properties.adapters === "number" && properties.adapters >= 0 ? properties.adapters : 1;
  const custom = readCustomAdapters(node.customAdapters);
  return Array.from({ length: adapters }, (_, i) => {
    const { portName, adapterType, macAddress } = nodeAdapter(node, custom, i);
    // A docker node's interfaces are the container's eth0..N whatever the port name format (GNS3's docker ports).
    const docker = nodeType === "docker";
    const formatted = docker ? `eth${i}` : i === 0 && node.firstPortName ? node.firstPortName : formatPortName(node.portNameFormat, i, node.portSegmentSize);
    const name = portName ?? formatted;
    return { ...ethernet(name, docker ? `eth${i}` : `e${i}`, i, 0), ...(adapterType && { adapter_type: adapterType }), ...(macAddress && { mac_address: macAddress }) };
  });
}
