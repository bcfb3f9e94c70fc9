import { z } from "zod";
import type { Node } from "../../../generated/prisma-sqlite/client.js";
import { ConflictError, ForbiddenError } from "../../../platform/core/errors.js";
import { parseInput } from "../../../platform/input.js";
import { nodeProperties } from "../../node-model/serialize.js";
import { hostInterfaces, INTERFACE_NAME, interfaceExists } from "../host-interfaces.js";
import { hostLinkUnavailable } from "../host-link.js";
import { hostPortDevice, type HostPortDevice, type HostPortTarget } from "../host-port-device.js";
import type { DeviceDriver, HostPolicy } from "./driver.js";

/**
 * The cloud: each port of its `ports_mapping` joins a link to the host — an interface (ethernet), a TAP, or a UDP
 * tunnel — through host-port-device.ts. It binds nothing until a port is linked. Binding the host's interfaces is a
 * power of the machine's operator: allowed in local mode only (PATCHBAY_LOCAL), refused otherwise.
 */
const name = z.string().min(1);
const port_number = z.int().min(0);
const iface = z.string().regex(INTERFACE_NAME, "must be an interface name (1-15 letters, digits, '.', '_' or '-')");
/** An IPv4 address or a host name (it reaches socat's address syntax: nothing else). */
const host = z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$/, "must be an IPv4 address or a host name");
export const cloudPortSchema = z.discriminatedUnion("type", [
  z.strictObject({ name, port_number, type: z.literal("ethernet"), interface: iface }),
  z.strictObject({ name, port_number, type: z.literal("tap"), interface: iface }),
  z.strictObject({ name, port_number, type: z.literal("udp"), lport: z.int().min(1).max(65535), rhost: host, rport: z.int().min(1).max(65535) }),
]);
export type CloudPort = z.infer<typeof cloudPortSchema>;

export const cloudPropertiesSchema = z.looseObject({
  ports_mapping: z.array(cloudPortSchema).optional(),
  remote_console_host: z.string().optional(),
  remote_console_port: z.int().min(1).max(65535).nullable().optional(),
  remote_console_type: z.enum(["telnet", "vnc", "spice", "http", "https", "none"]).optional(),
  remote_console_http_path: z.string().optional(),
});

/** GNS3's compute defaults (a cloud from the built-in template gets these, not the user template's). */
const REMOTE_CONSOLE_DEFAULTS = { remote_console_host: "", remote_console_port: 23, remote_console_type: "none", remote_console_http_path: "/" };

/** The host interfaces as a cloud's `interfaces` property shows them (name, type, special). */
const interfaceList = () => hostInterfaces().map(({ name, special, type }) => ({ name, special, type }));

/** Without a mapping, GNS3 gives a cloud one ethernet port per non-special host interface. */
const defaultMapping = (): CloudPort[] =>
  hostInterfaces()
    .filter((i) => !i.special)
    .map((i, n) => ({ interface: i.name, name: i.name, port_number: n, type: "ethernet" as const }));

export function cloudPorts(properties: Record<string, unknown>): CloudPort[] {
  const parsed = z.array(cloudPortSchema).safeParse(properties.ports_mapping);
  return parsed.success ? parsed.data : [];
}

const localOnly = (node: Pick<Node, "name">) =>
  `Cloud ${node.name} binds host interfaces, which this server allows only in local mode (PATCHBAY_LOCAL=1, the operator's opt-in)`;
const missing = (iface: string, node: Pick<Node, "name">) => `Interface '${iface}' could not be found on this system, please update '${node.name}'`;

function refusal(node: Pick<Node, "name" | "propertiesJson">, host: HostPolicy, ports: CloudPort[]): string | null {
  if (!ports.length) return null;
  if (!host.local) return localOnly(node);
  return hostLinkUnavailable("A cloud node");
}

const target = (p: CloudPort): HostPortTarget =>
  p.type === "udp" ? { kind: "udp", lport: p.lport, rhost: p.rhost, rport: p.rport } : { kind: p.type === "tap" ? "tap" : "interface", name: p.interface };

export const cloudDriver = {
  nodeType: "cloud" as const,
  runs: "device",
  consoles: { types: [null, "none", "telnet", "vnc", "spice", "http", "https"], default: null },
  udpOffsets: [0],
  suspends: false,

  // At start; a linked port whose interface is gone is GNS3's 409 too, from the device (HostPortDevice.revive).
  unavailable: (node, host) => refusal(node, host, cloudPorts(nodeProperties(node))),
  listedWhen: () => hostLinkUnavailable("") === null,

  checkLink(node, _adapter, port, host) {
    if (!host.local) throw new ForbiddenError(localOnly(node));
    const p = cloudPorts(nodeProperties(node)).find((m) => m.port_number === port);
    if (p?.type === "ethernet" && !interfaceExists(p.interface)) throw new ConflictError(missing(p.interface, node));
    const reason = hostLinkUnavailable("A cloud node");
    if (reason) throw new ConflictError(reason);
  },

  async prepareProperties(ctx, node, merged, changed) {
    const given = parseInput(cloudPropertiesSchema, merged);
    if (changed !== "all" && changed.includes("ports_mapping")) {
      const before = await ctx.db.node.findUnique({ where: { id: node.id }, select: { propertiesJson: true } });
      const same = before && JSON.stringify(nodeProperties(before).ports_mapping) === JSON.stringify(merged.ports_mapping);
      if (!same && (await ctx.db.linkEndpoint.count({ where: { nodeId: node.id } }))) throw new ConflictError("Cannot modify a cloud that is already connected.");
    }
    const mapping = given.ports_mapping?.length ? given.ports_mapping : defaultMapping();
    return {
      ...REMOTE_CONSOLE_DEFAULTS,
      ...given,
      // The compute numbers the ports in list order (GNS3 renumbers a udp port given as 7 to its place).
      ports_mapping: mapping.map((p, n) => ({ ...p, port_number: n })),
      interfaces: interfaceList(),
    };
  },

  create: (node, env) =>
    hostPortDevice(node, env, {
      target: (port) => {
        const p = cloudPorts(nodeProperties(node)).find((m) => m.port_number === port);
        return p && target(p);
      },
      refusal: () => refusal(node, env.host, cloudPorts(nodeProperties(node))),
    }),
  reconfigure: () => {}, // a connected cloud's mapping does not change (prepareProperties refuses it)

  computeView: (properties) => ({
    ports_mapping: properties.ports_mapping ?? [],
    interfaces: interfaceList(),
    remote_console_host: properties.remote_console_host ?? REMOTE_CONSOLE_DEFAULTS.remote_console_host,
    remote_console_port: properties.remote_console_port ?? REMOTE_CONSOLE_DEFAULTS.remote_console_port,
    remote_console_type: properties.remote_console_type ?? REMOTE_CONSOLE_DEFAULTS.remote_console_type,
    remote_console_http_path: properties.remote_console_http_path ?? REMOTE_CONSOLE_DEFAULTS.remote_console_http_path,
  }),
  remoteCreate: async (_ctx, node) => {
    const { interfaces: _live, ...settings } = nodeProperties(node);
    return settings;
  },
  remoteSettings: ({ interfaces: _live, ...settings }) => settings,
} satisfies DeviceDriver<HostPortDevice>;
