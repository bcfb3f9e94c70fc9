import path from "node:path";
import type { TopologyDocument } from "./document.js";

export interface ExportOptions {
  keepComputeIds: boolean;
  resetMacAddresses: boolean;
}

const MAC_KEYS = new Set(["mac_addr", "mac_address"]);
/** Image properties are machine-specific paths; an archive carries only their file names (compat §13). */
const isImageKey = (key: string, nodeType: string) => key.endsWith("image") || (nodeType === "iou" && key === "path");

/** The document as it goes into an export archive: portable image names, optional compute and MAC reset. */
export function prepareForExport(doc: TopologyDocument, opts: ExportOptions): TopologyDocument {
  const nodes = doc.topology.nodes.map((n) => {
    const properties = { ...((n.properties as Record<string, unknown> | undefined) ?? {}) };
    for (const [key, value] of Object.entries(properties)) {
      if (typeof value === "string" && value && isImageKey(key, n.node_type)) properties[key] = path.basename(value.replaceAll("\\", "/"));
      if (opts.resetMacAddresses && MAC_KEYS.has(key)) properties[key] = null;
    }
    return { ...n, properties, ...(opts.keepComputeIds ? {} : { compute_id: "local" }) };
  });
  return { ...doc, topology: { ...doc.topology, nodes, computes: opts.keepComputeIds ? doc.topology.computes : [] } };
}
