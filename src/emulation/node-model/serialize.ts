import path from "node:path";
import type { Node } from "../../generated/prisma-sqlite/client.js";
import { nodePorts } from "./ports.js";

/** Node types that run inside the compute (hub, switch, cloud, ...) have no working directory nor command line. */
export const BUILTIN_TYPES = new Set(["cloud", "nat", "ethernet_hub", "ethernet_switch", "frame_relay_switch", "atm_switch"]);

const parse = <T>(json: string, fallback: T): T => {
  try {
    return JSON.parse(json) as T;
  } catch {
    return fallback;
  }
};

export const nodeProperties = (node: Pick<Node, "propertiesJson">) => parse<Record<string, unknown>>(node.propertiesJson, {});

/** `<project dir>/project-files/<node_type>/<node_id>`: where a node keeps its files. */
export function nodeDirectory(projectDir: string, node: Pick<Node, "nodeType" | "id">): string {
  return path.join(projectDir, "project-files", node.nodeType, node.id);
}

/** The label always shows the node name (GNS3 overwrites whatever text a client sends). */
function label(node: Omit<Node, "createdAt">) {
  return { ...parse<Record<string, unknown>>(node.labelJson, {}), text: node.name };
}

/** The node as stored in the .gns3 topology file (also what GET P/nodes lists for a closed project). */
export function nodeToTopology(node: Omit<Node, "createdAt">) {
  return {
    compute_id: node.computeId,
    console: node.console,
    console_auto_start: node.consoleAutoStart,
    console_type: node.consoleType,
    custom_adapters: parse<unknown[]>(node.customAdapters, []),
    first_port_name: node.firstPortName,
    height: node.height,
    label: label(node),
    locked: node.locked,
    name: node.name,
    node_id: node.id,
    node_type: node.nodeType,
    port_name_format: node.portNameFormat,
    port_segment_size: node.portSegmentSize,
    properties: nodeProperties(node),
    symbol: node.symbol,
    template_id: node.templateId,
    width: node.width,
    x: node.x,
    y: node.y,
    z: node.z,
  };
}

/** The GNS3 v2 REST node object (responses and node.* events). */
export function nodeToRest(node: Omit<Node, "createdAt">, projectDir: string) {
  const properties = nodeProperties(node);
  return {
    ...nodeToTopology(node),
    command_line: node.commandLine,
    console_host: node.consoleHost,
    node_directory: BUILTIN_TYPES.has(node.nodeType) ? null : nodeDirectory(projectDir, node),
    ports: nodePorts({ ...node, properties }),
    project_id: node.projectId,
    status: node.status,
  };
}
