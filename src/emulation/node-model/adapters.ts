/**
 * A node's network adapters as GNS3 describes them (compat-qemu §4–5, the controller's StandardPortFactory): one
 * place for what the port list shows and what qemu's `-device` gets, so the two never disagree. Adapter n takes
 * its port name, type and MAC from the node's `custom_adapters` entry for n when it has them; else the type is the
 * node's `adapter_type` and the MAC is the node's base MAC plus n.
 */

/** A MAC address as GNS3 writes them: six hex pairs joined by colons. */
export const MAC_PATTERN = /^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$/;

const isMac = (v: unknown): v is string => typeof v === "string" && MAC_PATTERN.test(v);

/** A qemu node's base MAC: `0c:` + hex chars [2:8] of its id + `:00:00` (node e7a3f521-… → 0c:a3:f5:21:00:00). */
export function qemuBaseMac(nodeId: string): string {
  const hex = nodeId.replaceAll("-", "").toLowerCase();
  return `0c:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}:00:00`;
}

/** GNS3's docker base MAC: `02:42:` + hex chars [2:8] of the node id + `:00` (node 86c0e3a1-… → 02:42:c0:e3:a1:00). */
export function dockerBaseMac(nodeId: string): string {
  const hex = nodeId.replaceAll("-", "").toLowerCase();
  return `02:42:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}:00`;
}

/** The node types whose ports have a MAC derived from the node id when none is stored (imported from a .gns3). */
const BASE_MACS: Readonly<Record<string, (nodeId: string) => string>> = { qemu: qemuBaseMac, docker: dockerBaseMac };

/** The base plus n as a 48-bit integer, in lower case (GNS3's int_to_macaddress). */
export function offsetMac(base: string, n: number): string {
  const value = (BigInt(`0x${base.replaceAll(":", "")}`) + BigInt(n)) & 0xffffffffffffn;
  return value.toString(16).padStart(12, "0").match(/../g)!.join(":");
}

/** An entry of a node's `custom_adapters`, keeping only well-formed settings (other node types store them unchecked). */
export interface CustomAdapter {
  adapter_number: number;
  port_name?: string;
  adapter_type?: string;
  mac_address?: string;
}

/** The node's stored `custom_adapters` (JSON); malformed entries and settings are dropped. */
export function readCustomAdapters(json: string | undefined): CustomAdapter[] {
  let value: unknown;
  try {
    value = JSON.parse(json ?? "[]");
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  return value.flatMap((a) => {
    if (!a || typeof a !== "object" || !Number.isInteger(a.adapter_number)) return [];
    const mac = isMac(a.mac_address) ? a.mac_address : undefined;
    return [{ adapter_number: a.adapter_number, port_name: text(a.port_name), adapter_type: text(a.adapter_type), mac_address: mac }];
  });
}

export interface AdapterSource {
  /** The node id: a qemu node without a stored MAC (one imported from a .gns3) has the one its id gives. */
  id?: string;
  nodeType: string;
  properties: Record<string, unknown>;
}

/** Adapter n's custom port name (undefined: the port name format applies), type and MAC (undefined: none). */
export function nodeAdapter(node: AdapterSource, custom: readonly CustomAdapter[], n: number) {
  const own = custom.find((c) => c.adapter_number === n);
  const stored = node.properties.mac_address;
  const derived = node.id ? BASE_MACS[node.nodeType]?.(node.id) : undefined;
  const base = isMac(stored) ? stored : derived;
  const type = node.properties.adapter_type;
  return {
    portName: own?.port_name,
    adapterType: own?.adapter_type ?? (typeof type === "string" && type !== "" ? type : undefined),
    macAddress: own?.mac_address?.toLowerCase() ?? (base === undefined ? undefined : offsetMac(base, n)),
  };
}
