import type { Node } from "../../../generated/prisma-sqlite/client.js";
import { ConflictError, ForbiddenError } from "../../../platform/core/errors.js";
import { hostLinkUnavailable } from "../host-link.js";
import { hostPortDevice, type HostPortDevice } from "../host-port-device.js";
import { natInterfaceFor, natUnavailable } from "../nat-network.js";
import type { DeviceDriver, HostPolicy } from "./driver.js";

/**
 * The NAT node: one port, `nat0`, joined (through a TAP, host-port-device.ts) to the NAT network: libvirt's virbr0
 * when this host has it, as GNS3 does, otherwise Patchbay's own bridge with DHCP and masquerading
 * (nat-network.ts). It gives the lab a way out through the host and reaches the host itself: a host power, allowed in
 * local mode only (PATCHBAY_LOCAL), like the cloud.
 */
const localOnly = (node: Pick<Node, "name">) =>
  `NAT ${node.name} joins the lab to this host's network, which this server allows only in local mode (PATCHBAY_LOCAL=1, the operator's opt-in)`;

const reason = (host: HostPolicy) => hostLinkUnavailable("A NAT node") ?? natUnavailable(host.nat);

const natMapping = (host: HostPolicy) => [{ interface: natInterfaceFor(host.nat), name: "nat0", port_number: 0, type: "ethernet" }];

export const natDriver = {
  nodeType: "nat" as const,
  runs: "device",
  consoles: { types: [null, "none"], default: null },
  udpOffsets: [0],
  suspends: false,

  unavailable: (node, host) => (host.local ? reason(host) : localOnly(node)),
  listedWhen: (host) => reason(host) === null,

  checkLink(node, _adapter, _port, host) {
    if (!host.local) throw new ForbiddenError(localOnly(node));
    const why = reason(host) ?? host.natProblem?.() ?? null;
    if (why) throw new ConflictError(why);
  },

  // GNS3: the ports are always nat0 on the NAT interface; a ports_mapping sent is ignored.
  prepareProperties: async (ctx, _node, merged) => ({ ...merged, ports_mapping: natMapping({ local: ctx.config.local, nat: ctx.config.nat }) }),

  create: (node, env) =>
    hostPortDevice(node, env, {
      target: (port) => (port === 0 ? { kind: "nat" } : undefined),
      refusal: () => (env.host.local ? reason(env.host) : localOnly(node)),
    }),
  reconfigure: () => {},

  computeView: (properties) => ({ ports_mapping: properties.ports_mapping ?? [] }),
  remoteCreate: async () => ({}),
  remoteSettings: () => ({}),
} satisfies DeviceDriver<HostPortDevice>;
