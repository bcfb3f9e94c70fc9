import os from "node:os";

/**
 * `GET /v2/compute/network/interfaces`: this host's interfaces in GNS3's shape (what its GUI offers for clouds
 * and NAT). `special` marks loopback and virtualisation bridges, as GNS3 does, so clients can hide them.
 */
const SPECIAL_PREFIXES = ["lo", "vmnet", "vboxnet", "docker", "lxcbr", "virbr", "ovs-system", "veth", "fw", "p2p", "bridge", "vmware", "virtualbox", "gns3"];

export interface NetworkInterface {
  id: string;
  name: string;
  ip_address: string;
  mac_address: string;
  netmask: string;
  special: boolean;
  type: "ethernet";
}

export function networkInterfaces(): NetworkInterface[] {
  return Object.entries(os.networkInterfaces())
    .map(([name, addrs = []]) => {
      const v4 = addrs.find((a) => a.family === "IPv4");
      return {
        id: name,
        name,
        ip_address: v4?.address ?? "",
        mac_address: (v4 ?? addrs[0])?.mac ?? "",
        netmask: v4?.netmask ?? "",
        special: SPECIAL_PREFIXES.some((p) => name.startsWith(p)),
        type: "ethernet" as const,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}
