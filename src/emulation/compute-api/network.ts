import { hostInterfaces, type HostInterface } from "../runtime/host-interfaces.js";

/**
 * `GET /v2/compute/network/interfaces`: this host's interfaces in GNS3's shape (what its GUI offers for clouds
 * and NAT), from the runtime's view of the host (runtime/host-interfaces.ts).
 */
export type NetworkInterface = HostInterface;

export const networkInterfaces = (): NetworkInterface[] => hostInterfaces();
