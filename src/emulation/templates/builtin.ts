import { z } from "zod";
import { UUID_PATTERN } from "../../platform/input.js";
import { MAC_PATTERN } from "../node-model/adapters.js";
import { DOCKER_CONSOLE_TYPES } from "../node-model/docker-properties.js";
import { hubPortSchema, switchPortSchema } from "../node-model/ethernet-ports.js";
import { defaultPortsMapping } from "../node-model/ports.js";
import { qemuPropertyFields, qemuTemplateDefaults, qemuTemplateNodeFields } from "../node-model/qemu-properties.js";
import { NODE_TYPES, type NodeType } from "../node-model/vocabularies.js";

/**
 * GNS3 templates: the built-in ones (fixed ids, identical on every GNS3 2.2 server: uuid3(NAMESPACE_DNS, type)),
 * and per node type the settings a user template may carry, their defaults and which of them become node
 * properties when a node is made from the template.
 */
export type TemplateObject = {
  template_id: string;
  template_type: NodeType;
  name: string;
  category: Category;
  symbol: string;
  default_name_format: string;
  compute_id: string | null;
  builtin: boolean;
} & Record<string, unknown>;

export type TemplateEvent = { type: "template.created" | "template.updated" | "template.deleted"; template: TemplateObject };

declare module "../core/events.js" {
  interface ControllerEvents {
    template: TemplateEvent;
  }
}

export const CATEGORIES = ["router", "switch", "guest", "firewall"] as const;
export type Category = (typeof CATEGORIES)[number];

const builtin = (template_type: NodeType, template_id: string, name: string, default_name_format: string, category: Category, symbol: string, extra = {}) =>
  ({ template_id, template_type, name, default_name_format, category, symbol, compute_id: null, builtin: true, ...extra }) as TemplateObject;

/** In GNS3's order (a fresh server lists them so). */
export const BUILTIN_TEMPLATES: readonly TemplateObject[] = [
  builtin("cloud", "39e257dc-8412-3174-b6b3-0ee3ed6a43e9", "Cloud", "Cloud{0}", "guest", ":/symbols/cloud.svg"),
  builtin("nat", "df8f4ea9-33b7-3e96-86a2-c39bc9bb649c", "NAT", "NAT{0}", "guest", ":/symbols/nat.svg"),
  builtin("vpcs", "19021f99-e36f-394d-b4a1-8aaa902ab9cc", "VPCS", "PC{0}", "guest", ":/symbols/vpcs_guest.svg", {
    properties: { base_script_file: "vpcs_base_config.txt" },
  }),
  builtin("ethernet_switch", "1966b864-93e7-32d5-965f-001384eec461", "Ethernet switch", "Switch{0}", "switch", ":/symbols/ethernet_switch.svg", {
    console_type: "none",
  }),
  builtin("ethernet_hub", "b4503ea9-d6b6-3695-9fe4-1db3b39290b0", "Ethernet hub", "Hub{0}", "switch", ":/symbols/hub.svg"),
  builtin("frame_relay_switch", "dd0f6f3a-ba58-3249-81cb-a1dd88407a47", "Frame Relay switch", "FRSW{0}", "switch", ":/symbols/frame_relay_switch.svg"),
  builtin("atm_switch", "aaa764e2-b383-300f-8a0e-3493bbfdb7d2", "ATM switch", "ATMSW{0}", "switch", ":/symbols/atm_switch.svg"),
];

const uuid = z.string().regex(UUID_PATTERN);

/** The GUI may still send a legacy integer category (0 router, 1 switch, 2 guest, 3 firewall). */
const category = z.union([z.enum(CATEGORIES), z.int().min(0).max(3).transform((i) => CATEGORIES[i])]);

/** Keys every template has (GNS3's base template schema). */
const baseFields = {
  template_id: uuid.optional(),
  template_type: z.enum(NODE_TYPES),
  name: z.string().min(1),
  compute_id: z.string().min(1).nullable(),
  category: category.optional(),
  symbol: z.string().min(1).optional(),
  default_name_format: z.string().min(1).optional(),
  usage: z.string().optional(),
  builtin: z.boolean().optional(),
};

const remoteConsole = {
  remote_console_host: z.string().optional(),
  remote_console_port: z.int().min(1).max(65535).optional(),
  remote_console_type: z.enum(["telnet", "vnc", "spice", "http", "https", "none"]).optional(),
  remote_console_http_path: z.string().optional(),
};

interface TypeRules {
  /** The type's extra settings; null: not described here, any key is kept as given. */
  fields: z.core.$ZodLooseShape | null;
  defaults: () => Record<string, unknown>;
  /** Settings that become node properties; the others are node fields or template-only. */
  nodeProperties: readonly string[] | "all";
}

const switchPorts = () => (defaultPortsMapping("ethernet_switch") ?? []).map((p) => ({ ethertype: "", ...p }));

const RULES: Record<NodeType, TypeRules> = {
  vpcs: {
    fields: { base_script_file: z.string().optional(), console_type: z.enum(["telnet", "none"]).optional(), console_auto_start: z.boolean().optional() },
    defaults: () => ({ category: "guest", default_name_format: "PC{0}", symbol: ":/symbols/vpcs_guest.svg", base_script_file: "vpcs_base_config.txt", console_type: "telnet", console_auto_start: false }),
    nodeProperties: ["base_script_file"], // the node's first startup.vpc (runtime/drivers/vpcs-startup.ts), not kept as a property
  },
  ethernet_switch: {
    fields: { ports_mapping: z.array(switchPortSchema).optional(), console_type: z.enum(["telnet", "none"]).optional() },
    defaults: () => ({ category: "switch", default_name_format: "Switch{0}", symbol: ":/symbols/ethernet_switch.svg", ports_mapping: switchPorts(), console_type: "none" }),
    nodeProperties: ["ports_mapping"],
  },
  ethernet_hub: {
    fields: { ports_mapping: z.array(hubPortSchema).optional() },
    defaults: () => ({ category: "switch", default_name_format: "Hub{0}", symbol: ":/symbols/hub.svg", ports_mapping: defaultPortsMapping("ethernet_hub") }),
    nodeProperties: ["ports_mapping"],
  },
  cloud: {
    fields: { ports_mapping: z.array(z.record(z.string(), z.unknown())).optional(), ...remoteConsole },
    defaults: () => ({
      category: "guest",
      default_name_format: "Cloud{0}",
      symbol: ":/symbols/cloud.svg",
      ports_mapping: [],
      remote_console_host: "127.0.0.1",
      remote_console_port: 23,
      remote_console_type: "none",
      remote_console_http_path: "/",
    }),
    nodeProperties: ["ports_mapping", "remote_console_host", "remote_console_port", "remote_console_type", "remote_console_http_path"],
  },
  nat: {
    fields: { ports_mapping: z.array(z.record(z.string(), z.unknown())).optional() },
    defaults: () => ({ category: "guest", default_name_format: "NAT{0}", symbol: ":/symbols/nat.svg" }),
    nodeProperties: ["ports_mapping"],
  },
  frame_relay_switch: {
    fields: { mappings: z.record(z.string(), z.string()).optional() },
    defaults: () => ({ category: "switch", default_name_format: "FRSW{0}", symbol: ":/symbols/frame_relay_switch.svg", mappings: {} }),
    nodeProperties: ["mappings"],
  },
  atm_switch: {
    fields: { mappings: z.record(z.string(), z.string()).optional() },
    defaults: () => ({ category: "switch", default_name_format: "ATMSW{0}", symbol: ":/symbols/atm_switch.svg", mappings: {} }),
    nodeProperties: ["mappings"],
  },
  traceng: {
    fields: { ip_address: z.string().optional(), default_destination: z.string().optional(), console_type: z.enum(["none"]).optional() },
    defaults: () => ({ category: "guest", default_name_format: "TraceNG{0}", symbol: ":/symbols/traceng.svg", ip_address: "", default_destination: "", console_type: "none" }),
    nodeProperties: ["ip_address", "default_destination"],
  },
  qemu: {
    fields: Object.fromEntries(
      Object.entries({ ...qemuPropertyFields, ...qemuTemplateNodeFields }).filter(([k]) => k !== "usage").map(([k, v]) => [k, v.optional()]),
    ),
    defaults: () => ({ category: "guest", default_name_format: "{name}-{0}", symbol: ":/symbols/qemu_guest.svg", usage: "", ...qemuTemplateDefaults() }),
    nodeProperties: Object.keys(qemuPropertyFields),
  },
  // GNS3's docker template schema (compat-docker §5): the GUI wizard's body; image required.
  docker: {
    fields: {
      image: z.string().min(1),
      adapters: z.int().min(0).max(99).optional(),
      mac_address: z.union([z.string().regex(MAC_PATTERN), z.literal("")]).optional(),
      start_command: z.string().optional(),
      environment: z.string().optional(),
      console_type: z.enum(DOCKER_CONSOLE_TYPES).optional(),
      console_auto_start: z.boolean().optional(),
      console_http_port: z.int().min(1).max(65535).optional(),
      console_http_path: z.string().optional(),
      console_resolution: z.string().regex(/^[0-9]+x[0-9]+$/).optional(),
      extra_hosts: z.string().optional(),
      extra_volumes: z.array(z.string()).optional(),
      custom_adapters: z.array(z.record(z.string(), z.unknown())).optional(),
    },
    defaults: () => ({
      category: "guest",
      default_name_format: "{name}-{0}",
      symbol: ":/symbols/docker_guest.svg",
      usage: "",
      adapters: 1,
      mac_address: "",
      start_command: "",
      environment: "",
      console_type: "telnet",
      console_auto_start: false,
      console_http_port: 80,
      console_http_path: "/",
      console_resolution: "1024x768",
      extra_hosts: "",
      extra_volumes: [],
      custom_adapters: [],
    }),
    nodeProperties: ["image", "adapters", "mac_address", "start_command", "environment", "console_http_port", "console_http_path", "console_resolution", "extra_hosts", "extra_volumes"],
  },
  // Emulators this server does not run: their templates are kept as the client sends them.
  iou: { fields: null, defaults: () => ({ category: "router", default_name_format: "IOU{0}", symbol: ":/symbols/multilayer_switch.svg", usage: "" }), nodeProperties: "all" },
  dynamips: { fields: null, defaults: () => ({ category: "router", default_name_format: "R{0}", symbol: ":/symbols/router.svg", usage: "" }), nodeProperties: "all" },
  virtualbox: { fields: null, defaults: () => ({ category: "guest", default_name_format: "{name}-{0}", symbol: ":/symbols/vbox_guest.svg", usage: "" }), nodeProperties: "all" },
  vmware: { fields: null, defaults: () => ({ category: "guest", default_name_format: "{name}-{0}", symbol: ":/symbols/vmware_guest.svg", usage: "" }), nodeProperties: "all" },
};

/** Validates a whole template of `type` (a new one, or an existing one with changes merged in). */
export function templateSchema(type: NodeType) {
  const fields = RULES[type].fields;
  return fields === null ? z.looseObject(baseFields) : z.strictObject({ ...baseFields, ...fields });
}

/** The body of a base-only check: used before the type is known (the type is itself validated there). */
export const baseTemplateSchema = z.looseObject(baseFields);

export const templateDefaults = (type: NodeType) => RULES[type].defaults();

/** Template keys that are node fields (NodeChanges), by GNS3 name. */
export const NODE_FIELD_KEYS = {
  console_type: "consoleType",
  console_auto_start: "consoleAutoStart",
  symbol: "symbol",
  port_name_format: "portNameFormat",
  port_segment_size: "portSegmentSize",
  first_port_name: "firstPortName",
  custom_adapters: "customAdapters",
} as const;

/** Template-only keys: never passed to the node. */
const TEMPLATE_ONLY = new Set(["template_id", "template_type", "name", "compute_id", "builtin", "category", "usage", "default_name_format", "properties"]);

/** The node properties a template gives (its `properties` object, then its emulator settings). */
export function templateNodeProperties(t: TemplateObject): Record<string, unknown> {
  const keep = RULES[t.template_type].nodeProperties;
  const candidates = { ...((t.properties as Record<string, unknown> | undefined) ?? {}), ...t };
  return Object.fromEntries(
    // A type that names its node properties may name a template key too (qemu's `usage` is a node property upstream).
    Object.entries(candidates).filter(([k]) => !(k in NODE_FIELD_KEYS) && (keep === "all" ? !TEMPLATE_ONLY.has(k) : keep.includes(k))),
  );
}
