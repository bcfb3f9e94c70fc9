import fs from "node:fs";
import os from "node:os";

/**
 * This host's network interfaces, as GNS3's compute lists them (`GET /v2/compute/network/interfaces`, what its GUI
 * offers for clouds) and as cloud and NAT nodes check them. Every interface the kernel has (/sys/class/net), also
 * those that are down or have no address (GNS3 lists them through psutil; os.networkInterfaces() would skip them).
 */
export interface HostInterface {
  id: string;
  name: string;
  ip_address: string;
  mac_address: string;
  netmask: string;
  special: boolean;
  type: "ethernet" | "tap";
}

/**
 * GNS3 marks loopback and virtualisation interfaces `special` (clients hide them, and a cloud without a ports
 * mapping gets a port for every other one). GNS3 2.2 also marks every name ending in `-`, `n`, `i` or `c` (it loops
 * over the characters of "-nic"); Patchbay does not copy that bug.
 */
const SPECIAL_PREFIXES = ["lo", "vmnet", "vboxnet", "docker", "lxcbr", "virbr", "ovs-system", "veth", "fw", "p2p", "bridge", "vmware", "virtualbox", "gns3"];

export const isSpecialInterface = (name: string) => SPECIAL_PREFIXES.some((p) => name.toLowerCase().startsWith(p));

/**
 * The interface names a node may bind: 1–15 letters, digits, `.`, `_` or `-`, not "." or "..". Linux allows more
 * (anything but `/`, `:` and whitespace), but a name reaches socat's address syntax, where `,` `!` `'` `"` `\` and
 * brackets mean something: such an interface is listed, not bound.
 */
export const INTERFACE_NAME = /^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,15}$/;

const SYS = "/sys/class/net";

function read(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return "";
  }
}

/** Interface names of this host, sorted. */
export function hostInterfaceNames(): string[] {
  try {
    return fs.readdirSync(SYS).sort((a, b) => a.localeCompare(b));
  } catch {
    return Object.keys(os.networkInterfaces()).sort((a, b) => a.localeCompare(b));
  }
}

export function interfaceExists(name: string): boolean {
  return INTERFACE_NAME.test(name) && fs.existsSync(`${SYS}/${name}`);
}

/** A Linux bridge (frames reach it through a TAP enslaved to it, as GNS3 does for virbr0). */
export function isBridge(name: string): boolean {
  return INTERFACE_NAME.test(name) && fs.existsSync(`${SYS}/${name}/bridge`);
}

export function interfaceIndex(name: string): number | null {
  const n = Number(read(`${SYS}/${name}/ifindex`));
  return Number.isInteger(n) && n > 0 ? n : null;
}

/** GNS3's listing: every interface, sorted by name, with its first IPv4 address. */
export function hostInterfaces(): HostInterface[] {
  const addrs = os.networkInterfaces();
  return hostInterfaceNames().map((name) => {
    const v4 = (addrs[name] ?? []).find((a) => a.family === "IPv4");
    return {
      id: name,
      name,
      ip_address: v4?.address ?? "",
      mac_address: read(`${SYS}/${name}/address`) || (addrs[name]?.[0]?.mac ?? ""),
      netmask: v4?.netmask ?? "",
      special: isSpecialInterface(name),
      type: name.startsWith("tap") ? ("tap" as const) : ("ethernet" as const),
    };
  });
}

/** The IPv4 networks this host has addresses in, as [network, prefix length] (to keep a NAT subnet clear of them). */
export function hostIpv4Networks(): { address: string; prefix: number }[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a?.family === "IPv4" && a.cidr)
    .map((a) => ({ address: a!.address, prefix: Number(a!.cidr!.split("/")[1]) }));
}
