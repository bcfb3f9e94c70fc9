import { z } from "zod";

/**
 * The ports of the built-in Ethernet switch and hub (GNS3's `ports_mapping` of these types): one rule for a node's
 * properties and a template's, whichever face sets them.
 */
export const SWITCH_PORT_TYPES = ["access", "dot1q", "qinq"] as const;
/** The outer tag's EtherType of a QinQ port ("" or absent: the default, 0x8100). */
export const SWITCH_ETHERTYPES = ["", "0x8100", "0x88A8", "0x9100", "0x9200"] as const;

export const switchPortSchema = z.strictObject({
  name: z.string(),
  port_number: z.int().min(0),
  type: z.enum(SWITCH_PORT_TYPES),
  // Optional, as in GNS3's schema (the GUI always sends it): a port without one is in VLAN 1, the switch's default.
  vlan: z.int().min(1).max(4094).optional(),
  ethertype: z.enum(SWITCH_ETHERTYPES).optional(),
});
export const hubPortSchema = z.strictObject({ name: z.string(), port_number: z.int().min(0) });

export type SwitchPort = z.infer<typeof switchPortSchema>;
export type HubPort = z.infer<typeof hubPortSchema>;
