import { builder, enumValues } from "../../platform/graphql/builder.js";
import { cloudPorts, type CloudPort } from "../runtime/drivers/cloud.js";
import { hostInterfaces, type HostInterface } from "../runtime/host-interfaces.js";
import { gns3Names, usageOf, type SettingsKind } from "./settings-kind.js";

/**
 * Cloud and NAT nodes' settings as typed fields (members of `NodeSettings`), read from their stored properties, the
 * inputs that set them (`NodeSettingsInput.cloud`, `.nat`), and this server's host interfaces (`hostInterfaces`:
 * what a cloud port can bind).
 */
const HostPortTypeEnum = builder.enumType("HostPortType", {
  description: "What a cloud port joins: a host interface (ethernet), a TAP device, or a UDP tunnel",
  values: enumValues(["ethernet", "tap", "udp"] as const, {
    ethernet: "Bridged to a network interface of the host",
    tap: "Bridged to a TAP device of the host",
    udp: "A UDP tunnel to another host's address and port",
  }),
});
const HostInterfaceTypeEnum = builder.enumType("HostInterfaceType", {
  description: "The kind of a host network interface",
  values: enumValues(["ethernet", "tap"] as const, { ethernet: "A (physical or virtual) Ethernet interface", tap: "A TAP device: a virtual interface a program feeds" }),
});
const RemoteConsoleTypeEnum = builder.enumType("RemoteConsoleType", {
  description: "The protocol of the console a cloud node points at",
  values: enumValues(["telnet", "vnc", "spice", "http", "https", "none"] as const, {
    telnet: "A text console over telnet",
    vnc: "A VNC graphical console",
    spice: "A SPICE graphical console",
    http: "A web interface over HTTP",
    https: "A web interface over HTTPS",
    none: "No console",
  }),
});

const HostPortRef = builder.objectRef<CloudPort>("HostPort").implement({
  description: "A port of a cloud or NAT node and what it joins on the host (interface for ethernet and tap, the UDP ends for udp)",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The port's name as drawn in the lab" }),
    portNumber: t.exposeInt("port_number", { description: "The port's number on the node, from 0" }),
    type: t.field({ type: HostPortTypeEnum, description: "What the port joins on the host", resolve: (p) => p.type }),
    interface: t.string({ nullable: true, description: "The host interface or TAP device the port is bridged to (null for udp)", resolve: (p) => (p.type === "udp" ? null : p.interface) }),
    localPort: t.int({ nullable: true, description: "The UDP port this host listens on for the tunnel (udp only)", resolve: (p) => (p.type === "udp" ? p.lport : null) }),
    remoteHost: t.string({ nullable: true, description: "The address the tunnel sends to (udp only)", resolve: (p) => (p.type === "udp" ? p.rhost : null) }),
    remotePort: t.int({ nullable: true, description: "The UDP port the tunnel sends to (udp only)", resolve: (p) => (p.type === "udp" ? p.rport : null) }),
  }),
});

const HostInterfaceRef = builder.objectRef<HostInterface>("HostInterface").implement({
  description: "A network interface of this server's host, as GNS3 lists it (special: loopback and virtualisation bridges)",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The interface's name on the host (eth0, virbr0 …)" }),
    type: t.field({ type: HostInterfaceTypeEnum, description: "The kind of interface", resolve: (i) => i.type }),
    special: t.exposeBoolean("special", { description: "A loopback or virtualisation bridge: rarely what a lab should bind" }),
    ipAddress: t.string({ nullable: true, description: "The interface's IPv4 address, if it has one", resolve: (i) => i.ip_address || null }),
    netmask: t.string({ nullable: true, description: "The IPv4 netmask, if the interface has an address", resolve: (i) => i.netmask || null }),
    macAddress: t.string({ nullable: true, description: "The interface's MAC address", resolve: (i) => i.mac_address || null }),
  }),
});

interface RemoteConsole {
  host: string;
  port: number | null;
  type: "telnet" | "vnc" | "spice" | "http" | "https" | "none";
  httpPath: string;
}

const RemoteConsoleRef = builder.objectRef<RemoteConsole>("CloudRemoteConsole").implement({
  description: "A console the GUI opens to a device behind the cloud (stored only; the cloud has no console of its own)",
  fields: (t) => ({
    host: t.exposeString("host", { description: "The address of the device's console" }),
    port: t.exposeInt("port", { nullable: true, description: "The TCP port of the device's console" }),
    type: t.field({ type: RemoteConsoleTypeEnum, description: "The protocol the console speaks", resolve: (c) => c.type }),
    httpPath: t.exposeString("httpPath", { description: "The path of a web console (http and https)" }),
  }),
});

interface CloudSettings {
  ports: CloudPort[];
  remoteConsole: RemoteConsole;
  usage: string;
}

const CloudSettingsRef = builder.objectRef<CloudSettings>("CloudSettings").implement({
  description: "The settings of a cloud node: its ports (GNS3's ports_mapping) and its remote console",
  fields: (t) => ({
    ports: t.field({ type: [HostPortRef], description: "The cloud's ports and what each joins on the host", resolve: (c) => c.ports }),
    remoteConsole: t.field({ type: RemoteConsoleRef, description: "The console of a device behind the cloud", resolve: (c) => c.remoteConsole }),
    usage: t.exposeString("usage", { description: "Free text on how to use the cloud, shown to lab users" }),
  }),
});

const NatSettingsRef = builder.objectRef<{ ports: CloudPort[]; usage: string }>("NatSettings").implement({
  description: "The settings of a NAT node: its one port, nat0, and the host bridge it joins",
  fields: (t) => ({
    ports: t.field({ type: [HostPortRef], description: "The NAT node's port (nat0) and the host bridge it joins", resolve: (n) => n.ports }),
    usage: t.exposeString("usage", { description: "Free text on how to use the NAT node, shown to lab users" }),
  }),
});

const REMOTE_CONSOLE_TYPES = new Set(["telnet", "vnc", "spice", "http", "https", "none"]);

function readCloudSettings(properties: Record<string, unknown>): CloudSettings {
  const type = String(properties.remote_console_type ?? "none");
  return {
    ports: cloudPorts(properties),
    remoteConsole: {
      host: typeof properties.remote_console_host === "string" ? properties.remote_console_host : "",
      port: typeof properties.remote_console_port === "number" ? properties.remote_console_port : null,
      type: (REMOTE_CONSOLE_TYPES.has(type) ? type : "none") as RemoteConsole["type"],
      httpPath: typeof properties.remote_console_http_path === "string" ? properties.remote_console_http_path : "/",
    },
    usage: usageOf(properties),
  };
}

const HostPortInput = builder.inputType("HostPortInput", {
  description: "A port of a cloud node and what it joins on the host: an interface for ethernet and tap, the UDP ends for udp",
  fields: (t) => ({
    name: t.string({ required: true, description: "The port's name as drawn in the lab" }),
    portNumber: t.int({ required: true, description: "The port's number on the node (the ports are numbered again in list order, from 0)" }),
    type: t.field({ type: HostPortTypeEnum, required: true, description: "What the port joins on the host" }),
    interface: t.string({ description: "The host interface or TAP device the port is bridged to (ethernet and tap only)" }),
    localPort: t.int({ description: "The UDP port this host listens on for the tunnel (udp only)" }),
    remoteHost: t.string({ description: "The address the tunnel sends to (udp only)" }),
    remotePort: t.int({ description: "The UDP port the tunnel sends to (udp only)" }),
  }),
});
const RemoteConsoleInput = builder.inputType("CloudRemoteConsoleInput", {
  description: "The console the GUI opens to a device behind the cloud: only the fields given change",
  fields: (t) => ({
    host: t.string({ description: "The address of the device's console" }),
    port: t.int({ description: "The TCP port of the device's console" }),
    type: t.field({ type: RemoteConsoleTypeEnum, description: "The protocol the console speaks" }),
    httpPath: t.string({ description: "The path of a web console (http and https)" }),
  }),
});
const CloudSettingsInput = builder.inputType("CloudSettingsInput", {
  description: "Settings of a cloud node; on a change only the fields given change (a connected cloud's ports cannot)",
  fields: (t) => ({
    ports: t.field({ type: [HostPortInput], description: "The cloud's ports, replacing the current list (empty: one ethernet port per host interface)" }),
    remoteConsole: t.field({ type: RemoteConsoleInput, description: "The console of a device behind the cloud" }),
    usage: t.string({ description: "Free text on how to use the cloud, shown to lab users" }),
  }),
});
const NatSettingsInput = builder.inputType("NatSettingsInput", {
  description: "Settings of a NAT node (its port is always nat0 on this host's NAT bridge)",
  fields: (t) => ({ usage: t.string({ description: "Free text on how to use the NAT node, shown to lab users" }) }),
});

/** GNS3's names of a UDP port's ends, and of the remote console's fields. */
const UDP_RENAMES = { localPort: "lport", remoteHost: "rhost", remotePort: "rport" };
const REMOTE_CONSOLE_RENAMES = { host: "remote_console_host", port: "remote_console_port", type: "remote_console_type", httpPath: "remote_console_http_path" };

type CloudInput = typeof CloudSettingsInput.$inferInput;
export const cloudSettings: SettingsKind<CloudSettings, CloudInput> = {
  member: "cloud",
  shown: CloudSettingsRef,
  read: readCloudSettings,
  given: CloudSettingsInput,
  toProperties: ({ ports, remoteConsole, ...fields }) => ({
    ...gns3Names(fields),
    ...(ports != null && { ports_mapping: ports.map((p) => gns3Names(p, UDP_RENAMES)) }),
    ...gns3Names(remoteConsole ?? {}, REMOTE_CONSOLE_RENAMES),
  }),
};

export const natSettings: SettingsKind<{ ports: CloudPort[]; usage: string }, typeof NatSettingsInput.$inferInput> = {
  member: "nat",
  shown: NatSettingsRef,
  read: (properties) => ({ ports: cloudPorts(properties), usage: usageOf(properties) }),
  given: NatSettingsInput,
  toProperties: (input) => gns3Names(input),
};

builder.queryFields((t) => ({
  hostInterfaces: t.field({
    type: [HostInterfaceRef],
    description: "This server's host interfaces, sorted by name: what a cloud port can bind",
    resolve: () => hostInterfaces(),
  }),
}));
