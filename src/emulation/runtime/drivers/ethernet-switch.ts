import { nodeProperties } from "../../node-model/serialize.js";
import { EthernetSwitch } from "../ethernet.js";
import { switchPortSchema } from "../../node-model/ethernet-ports.js";
import type { DeviceDriver } from "./driver.js";
import { checkedPortsMapping, ethernetDevice, portMappings } from "./ethernet-device.js";

/** The built-in switch: learns MACs per VLAN and follows its ports mapping, changed while it runs too. */
export const ethernetSwitchDriver = {
  ...ethernetDevice,
  nodeType: "ethernet_switch" as const,
  consoles: { types: ["telnet", "none"], default: "none", portWithoutConsole: true },
  prepareProperties: checkedPortsMapping(switchPortSchema),
  create: (node) => new EthernetSwitch(portMappings(nodeProperties(node).ports_mapping)),
  reconfigure: (device, properties) => device.setMapping(portMappings(properties.ports_mapping)),
} satisfies DeviceDriver<EthernetSwitch>;
