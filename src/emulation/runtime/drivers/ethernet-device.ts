import { z } from "zod";
import type { Node } from "../../../generated/prisma-sqlite/client.js";
import { parseInput } from "../../../platform/input.js";
import { nodeProperties } from "../../node-model/serialize.js";
import type { PortMapping } from "../ethernet.js";

/**
 * What the built-in hub and switch share: they forward inside this server (ethernet.ts), so nothing is missing
 * and nothing pauses; one UDP port per link end; their settings are the ports mapping (and a usage note).
 */
export const ethernetDevice = {
  runs: "device",
  udpOffsets: [0],
  suspends: false,
  unavailable: () => null,
  computeView: (properties: Record<string, unknown>) => ({
    ports_mapping: properties.ports_mapping ?? [],
    usage: typeof properties.usage === "string" ? properties.usage : "",
  }),
  remoteCreate: async (_ctx: unknown, node: Pick<Node, "propertiesJson">) => ({ ports_mapping: nodeProperties(node).ports_mapping ?? [] }),
  remoteSettings: (properties: Record<string, unknown>) => properties,
} as const;

/** The valid entries of a `ports_mapping` property. */
export function portMappings(v: unknown): PortMapping[] {
  return Array.isArray(v) ? (v.filter((m) => typeof m?.port_number === "number") as PortMapping[]) : [];
}

/**
 * The device's `prepareProperties`: a ports mapping a client sets (or a new node's) is checked against the type's
 * port rule, as GNS3's compute checks it; one stored already (an imported topology's) is left as it is.
 */
export function checkedPortsMapping(port: z.ZodType) {
  const schema = z.looseObject({ ports_mapping: z.array(port).optional() });
  return async (_ctx: unknown, _node: unknown, merged: Record<string, unknown>, changed: readonly string[] | "all") => {
    if (changed === "all" || changed.includes("ports_mapping")) parseInput(schema, merged);
    return merged;
  };
}
