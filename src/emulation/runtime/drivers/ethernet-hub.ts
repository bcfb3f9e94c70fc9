import { EthernetHub } from "../ethernet.js";
import type { DeviceDriver } from "./driver.js";
import { ethernetDevice } from "./ethernet-device.js";

/** The built-in hub: floods every frame to its other ports; no console. */
export const ethernetHubDriver = {
  ...ethernetDevice,
  nodeType: "ethernet_hub" as const,
  consoles: { types: [null, "none"], default: null },
  create: () => new EthernetHub(),
  reconfigure: () => {},
} satisfies DeviceDriver<EthernetHub>;
