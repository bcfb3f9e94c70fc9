/** The vocabularies of the node object (GNS3 v2 enums), shared by the input contract and the GraphQL enums. */
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
