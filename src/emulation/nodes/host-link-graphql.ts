import { builder } from "../../platform/graphql/builder.js";
import { enumValues } from "./graphql.js"; // and the EmulatedNode type this file extends
import { nodeProperties } from "../node-model/serialize.js";
import { cloudPorts, type CloudPort } from "../runtime/drivers/cloud.js";
import { hostInterfaces, type HostInterface } from "../runtime/host-interfaces.js";

/**
 * Cloud and NAT nodes' settings as typed fields (`EmulatedNode.cloud`, `EmulatedNode.nat`), read from the same stored
 * properties the JSON `properties` field shows (they are set through `properties`, as every node type's), and this
 * server's host interfaces (`hostInterfaces`: what a cloud port can bind, GET /v2/compute/network/interfaces).
 */
const HostPortTypeEnum = builder.enumType("HostPortType", {
  description: "What a cloud port joins: a host interface (ethernet), a TAP device, or a UDP tunnel",
  values: enumValues(["ethernet", "tap", "udp"] as const),
});
const HostInterfaceTypeEnum = builder.enumType("HostInterfaceType", { values: enumValues(["ethernet", "tap"] as const) });
const RemoteConsoleTypeEnum = builder.enumType("RemoteConsoleType", {
  values: enumValues(["telnet", "vnc", "spice", "http", "https", "none"] as const),
});

const HostPortRef = builder.objectRef<CloudPort>("HostPort").implement({
  description: "A port of a cloud or NAT node and what it joins on the host (interface for ethernet and tap, the UDP ends for udp)",
  fields: (t) => ({
    name: t.exposeString("name"),
    portNumber: t.exposeInt("port_number"),
    type: t.field({ type: HostPortTypeEnum, resolve: (p) => p.type }),
    interface: t.string({ nullable: true, resolve: (p) => (p.type === "udp" ? null : p.interface) }),
    localPort: t.int({ nullable: true, resolve: (p) => (p.type === "udp" ? p.lport : null) }),
    remoteHost: t.string({ nullable: true, resolve: (p) => (p.type === "udp" ? p.rhost : null) }),
    remotePort: t.int({ nullable: true, resolve: (p) => (p.type === "udp" ? p.rport : null) }),
  }),
});

const HostInterfaceRef = builder.objectRef<HostInterface>("HostInterface").implement({
  description: "A network interface of this server's host, as GNS3 lists it (special: loopback and virtualisation bridges)",
  fields: (t) => ({
    name: t.exposeString("name"),
    type: t.field({ type: HostInterfaceTypeEnum, resolve: (i) => i.type }),
    special: t.exposeBoolean("special"),
    ipAddress: t.string({ nullable: true, resolve: (i) => i.ip_address || null }),
    netmask: t.string({ nullable: true, resolve: (i) => i.netmask || null }),
    macAddress: t.string({ nullable: true, resolve: (i) => i.mac_address || null }),
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
    host: t.exposeString("host"),
    port: t.exposeInt("port", { nullable: true }),
    type: t.field({ type: RemoteConsoleTypeEnum, resolve: (c) => c.type }),
    httpPath: t.exposeString("httpPath"),
  }),
});

interface CloudSettings {
  ports: CloudPort[];
  remoteConsole: RemoteConsole;
}

const CloudSettingsRef = builder.objectRef<CloudSettings>("CloudSettings").implement({
  description: "The settings of a cloud node: its ports (GNS3's ports_mapping) and its remote console",
  fields: (t) => ({
    ports: t.field({ type: [HostPortRef], resolve: (c) => c.ports }),
    remoteConsole: t.field({ type: RemoteConsoleRef, resolve: (c) => c.remoteConsole }),
  }),
});

const NatSettingsRef = builder.objectRef<{ ports: CloudPort[] }>("NatSettings").implement({
  description: "The settings of a NAT node: its one port, nat0, and the host bridge it joins",
  fields: (t) => ({ ports: t.field({ type: [HostPortRef], resolve: (n) => n.ports }) }),
});

const REMOTE_CONSOLE_TYPES = new Set(["telnet", "vnc", "spice", "http", "https", "none"]);

function cloudSettings(properties: Record<string, unknown>): CloudSettings {
  const type = String(properties.remote_console_type ?? "none");
  return {
    ports: cloudPorts(properties),
    remoteConsole: {
      host: typeof properties.remote_console_host === "string" ? properties.remote_console_host : "",
      port: typeof properties.remote_console_port === "number" ? properties.remote_console_port : null,
      type: (REMOTE_CONSOLE_TYPES.has(type) ? type : "none") as RemoteConsole["type"],
      httpPath: typeof properties.remote_console_http_path === "string" ? properties.remote_console_http_path : "/",
    },
  };
}

builder.prismaObjectFields("Node", (t) => ({
  cloud: t.field({
    type: CloudSettingsRef,
    nullable: true,
    description: "The cloud settings, typed (null for other node types)",
    select: { nodeType: true, propertiesJson: true },
    resolve: (n) => (n.nodeType === "cloud" ? cloudSettings(nodeProperties(n)) : null),
  }),
  nat: t.field({
    type: NatSettingsRef,
    nullable: true,
    description: "The NAT settings, typed (null for other node types)",
    select: { nodeType: true, propertiesJson: true },
    resolve: (n) => (n.nodeType === "nat" ? { ports: cloudPorts(nodeProperties(n)) } : null),
  }),
}));

builder.queryFields((t) => ({
  hostInterfaces: t.field({
    type: [HostInterfaceRef],
    description: "This server's host interfaces, sorted by name: what a cloud port can bind (GET /v2/compute/network/interfaces)",
    resolve: () => hostInterfaces(),
  }),
}));
