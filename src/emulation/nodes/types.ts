/** The vocabularies of the node object (GNS3 v2 enums), shared by REST schemas and GraphQL enums. */
export const NODE_TYPES = [
  "cloud",
  "nat",
  "ethernet_hub",
  "ethernet_switch",
  "frame_relay_switch",
  "atm_switch",
  "docker",
  "dynamips",
  "vpcs",
  "traceng",
  "virtualbox",
  "vmware",
  "iou",
  "qemu",
] as const;
export const NODE_STATUSES = ["stopped", "started", "suspended"] as const;
export const CONSOLE_TYPES = ["vnc", "telnet", "http", "https", "spice", "spice+agent", "none"] as const;

export type NodeType = (typeof NODE_TYPES)[number];
export type NodeStatus = (typeof NODE_STATUSES)[number];
export type ConsoleType = (typeof CONSOLE_TYPES)[number];

export interface NodeLabel {
  text?: string;
  style?: string | null;
  x?: number | null;
  y?: number;
  rotation?: number;
}

/** Settable fields of a node; omitted ones keep their current (or default) value. */
export interface NodeChanges {
  name?: string;
  templateId?: string | null;
  console?: number | null;
  consoleType?: ConsoleType | null;
  consoleAutoStart?: boolean;
  properties?: Record<string, unknown>;
  label?: NodeLabel;
  symbol?: string | null;
  x?: number;
  y?: number;
  z?: number;
  locked?: boolean;
  portNameFormat?: string;
  portSegmentSize?: number;
  firstPortName?: string | null;
  customAdapters?: unknown[];
}

export interface NewNode extends NodeChanges {
  name: string;
  nodeType: NodeType;
  computeId: string;
  nodeId?: string;
}
