import { builder, enumValues } from "../../platform/graphql/builder.js";
import { SWITCH_PORT_TYPES, type HubPort, type SwitchPort } from "../node-model/ethernet-ports.js";
import { gns3Names, usageOf, type SettingsKind } from "./settings-kind.js";

/**
 * The built-in Ethernet switch's and hub's settings as typed fields (members of `NodeSettings`) and the inputs that
 * set them (`NodeSettingsInput.ethernetSwitch`, `.ethernetHub`): their ports (GNS3's `ports_mapping`).
 */
const SwitchPortTypeEnum = builder.enumType("EthernetSwitchPortType", {
  description: "How a switch port treats VLAN tags",
  values: enumValues(SWITCH_PORT_TYPES, {
    access: "Untagged frames, all in the port's VLAN",
    dot1q: "An 802.1Q trunk: tagged frames of any VLAN, untagged ones in the port's (native) VLAN",
    qinq: "802.1ad (QinQ): every frame gets an outer tag of the port's VLAN",
  }),
});

/** A stored port as the typed view shows it: GNS3's keys, the ones a switch port may lack filled in. */
type ShownSwitchPort = Required<Omit<SwitchPort, "ethertype">> & { ethertype: string | null };

const SwitchPortRef = builder.objectRef<ShownSwitchPort>("EthernetSwitchPort").implement({
  description: "A port of the built-in Ethernet switch and the VLANs it carries",
  fields: (t) => ({
    portNumber: t.exposeInt("port_number", { description: "The port's number on the switch, from 0" }),
    name: t.exposeString("name", { description: "The port's name as drawn in the lab" }),
    type: t.field({ type: SwitchPortTypeEnum, description: "How the port treats VLAN tags", resolve: (p) => p.type }),
    vlan: t.exposeInt("vlan", { description: "The port's VLAN: an access port's, a trunk's native one, a QinQ port's outer tag (1 to 4094)" }),
    ethertype: t.exposeString("ethertype", { nullable: true, description: "The EtherType of a QinQ port's outer tag (0x8100, 0x88A8, 0x9100 or 0x9200; null: 0x8100)" }),
  }),
});
const HubPortRef = builder.objectRef<HubPort>("EthernetHubPort").implement({
  description: "A port of the built-in Ethernet hub",
  fields: (t) => ({
    portNumber: t.exposeInt("port_number", { description: "The port's number on the hub, from 0" }),
    name: t.exposeString("name", { description: "The port's name as drawn in the lab" }),
  }),
});

const SwitchPortInput = builder.inputType("EthernetSwitchPortInput", {
  description: "A port of the built-in Ethernet switch",
  fields: (t) => ({
    portNumber: t.int({ required: true, description: "The port's number on the switch, from 0" }),
    name: t.string({ required: true, description: "The port's name as drawn in the lab" }),
    type: t.field({ type: SwitchPortTypeEnum, required: true, description: "How the port treats VLAN tags" }),
    vlan: t.int({ required: true, description: "The port's VLAN: an access port's, a trunk's native one, a QinQ port's outer tag (1 to 4094)" }),
    ethertype: t.string({ description: "The EtherType of a QinQ port's outer tag: 0x8100 (the default), 0x88A8, 0x9100 or 0x9200" }),
  }),
});
const HubPortInput = builder.inputType("EthernetHubPortInput", {
  description: "A port of the built-in Ethernet hub",
  fields: (t) => ({
    portNumber: t.int({ required: true, description: "The port's number on the hub, from 0" }),
    name: t.string({ required: true, description: "The port's name as drawn in the lab" }),
  }),
});

interface PortsSettings<P> {
  ports: P[];
  usage: string;
}
const stored = (properties: Record<string, unknown>): Record<string, unknown>[] =>
  Array.isArray(properties.ports_mapping) ? properties.ports_mapping.filter((p) => typeof p?.port_number === "number") : [];
const text = (v: unknown, fallback: string) => (typeof v === "string" ? v : fallback);

const SwitchSettingsRef = builder.objectRef<PortsSettings<ShownSwitchPort>>("EthernetSwitchSettings").implement({
  description: "The settings of a built-in Ethernet switch: its ports and their VLANs",
  fields: (t) => ({
    ports: t.field({ type: [SwitchPortRef], description: "The switch's ports (links attach to them by number)", resolve: (s) => s.ports }),
    usage: t.exposeString("usage", { description: "Free text on how to use the switch, shown to lab users" }),
  }),
});
const HubSettingsRef = builder.objectRef<PortsSettings<HubPort>>("EthernetHubSettings").implement({
  description: "The settings of a built-in Ethernet hub: its ports",
  fields: (t) => ({
    ports: t.field({ type: [HubPortRef], description: "The hub's ports (links attach to them by number)", resolve: (s) => s.ports }),
    usage: t.exposeString("usage", { description: "Free text on how to use the hub, shown to lab users" }),
  }),
});

const portsInput = (name: string, what: string, port: typeof SwitchPortInput | typeof HubPortInput) =>
  builder.inputType(name, {
    description: `Settings of a built-in Ethernet ${what}; on a change only the fields given change`,
    fields: (t) => ({
      ports: t.field({ type: [port], description: `The ${what}'s ports, replacing the current list` }),
      usage: t.string({ description: `Free text on how to use the ${what}, shown to lab users` }),
    }),
  });
const SwitchSettingsInput = portsInput("EthernetSwitchSettingsInput", "switch", SwitchPortInput);
const HubSettingsInput = portsInput("EthernetHubSettingsInput", "hub", HubPortInput);

type PortsInput = { ports?: object[] | null; usage?: string | null };
const portsProperties = ({ ports, ...fields }: PortsInput) => ({
  ...gns3Names(fields),
  ...(ports != null && { ports_mapping: ports.map((p) => gns3Names(p)) }),
});

export const ethernetSwitchSettings: SettingsKind<PortsSettings<ShownSwitchPort>, PortsInput> = {
  member: "ethernetSwitch",
  shown: SwitchSettingsRef,
  read: (properties) => ({
    ports: stored(properties).map((p) => ({
      port_number: p.port_number as number,
      name: text(p.name, `Ethernet${p.port_number}`),
      type: (SWITCH_PORT_TYPES as readonly unknown[]).includes(p.type) ? (p.type as SwitchPort["type"]) : "access",
      vlan: typeof p.vlan === "number" ? p.vlan : 1,
      ethertype: typeof p.ethertype === "string" && p.ethertype ? p.ethertype : null,
    })),
    usage: usageOf(properties),
  }),
  given: SwitchSettingsInput,
  toProperties: portsProperties,
};

export const ethernetHubSettings: SettingsKind<PortsSettings<HubPort>, PortsInput> = {
  member: "ethernetHub",
  shown: HubSettingsRef,
  read: (properties) => ({
    ports: stored(properties).map((p) => ({ port_number: p.port_number as number, name: text(p.name, `Ethernet${p.port_number}`) })),
    usage: usageOf(properties),
  }),
  given: HubSettingsInput,
  toProperties: portsProperties,
};
