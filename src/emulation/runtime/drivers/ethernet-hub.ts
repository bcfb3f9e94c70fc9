import { EthernetHub } from "../ethernet.js";
import { hubPortSchema } from "../../node-model/ethernet-ports.js";
import type { DeviceDriver } from "./driver.js";
import { checkedPortsMapping, ethernetDevice } from "./ethernet-device.js";

/** The built-in hub: floods every frame to its other ports; no console. */
export const ethernetHubDriver = {
  ...ethernetDevice,
  nodeType: "ethernet_hub" as const,
  consoles: { types: [null, "none"], default: null },
  prepareProperties: checkedPortsMapping(hubPortSchema),
  create: () => new EthernetHub(),
  reconfigure: () => {},
} satisfies DeviceDriver<EthernetHub>;
