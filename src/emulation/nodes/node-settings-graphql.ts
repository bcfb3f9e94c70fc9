import { InvalidInputError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { NODE_TYPES, type NodeType } from "../node-model/vocabularies.js";
import { dockerSettings } from "./docker-settings-graphql.js";
import { ethernetHubSettings, ethernetSwitchSettings } from "./ethernet-settings-graphql.js";
import { cloudSettings, natSettings } from "./host-link-settings-graphql.js";
import { qemuSettings } from "./qemu-settings-graphql.js";
import type { AnySettingsKind } from "./settings-kind.js";
import { vpcsSettings } from "./vpcs-settings-graphql.js";

/**
 * Typed settings, one shape for nodes and templates: `NodeSettings` (a union with one object per node type that has
 * typed settings) shows them, `NodeSettingsInput` (one member per such type, exactly one given) sets them. The node
 * types this server does not run keep GNS3's JSON properties, the escape hatch for shapes not described here.
 */
const KINDS: Partial<Record<NodeType, AnySettingsKind>> = {
  qemu: qemuSettings,
  docker: dockerSettings,
  cloud: cloudSettings,
  nat: natSettings,
  vpcs: vpcsSettings,
  ethernet_switch: ethernetSwitchSettings,
  ethernet_hub: ethernetHubSettings,
};
const kindOf = (nodeType: string): AnySettingsKind | undefined => KINDS[nodeType as NodeType];

/** The node types whose settings stay GNS3's JSON, as descriptions name them. */
export const UNTYPED_NODE_TYPES = NODE_TYPES.filter((t) => !KINDS[t]).join(", ");

/** Which member of the union a typed view is (the views are plain objects of GNS3's keys). */
const SHOWN_AS = Symbol("settings type");

export const NodeSettings = builder.unionType("NodeSettings", {
  description: "The typed settings of a node, or the defaults a template gives its nodes: one object per node type that has them",
  types: Object.values(KINDS).map((k) => k.shown),
  resolveType: (settings) => (settings as { [SHOWN_AS]: string })[SHOWN_AS],
});

export const NodeSettingsInput = builder.inputType("NodeSettingsInput", {
  description: "Typed settings: exactly one member, the one of the node's (or template's) type",
  isOneOf: true,
  fields: (t) =>
    Object.fromEntries(
      Object.entries(KINDS).map(([type, kind]) => [kind.member, t.field({ type: kind.given, description: `For a node or template of type ${type.toUpperCase()}` })]),
    ),
});

/** The typed view of a node type's stored properties; null for a type without typed settings (or unreadable ones). */
export function typedSettings(nodeType: string, properties: Record<string, unknown>, nodeId: string | null): (typeof NodeSettings)["$inferType"] | null {
  const kind = kindOf(nodeType);
  const shown: object | null | undefined = kind?.read(properties, nodeId);
  return kind && shown ? Object.assign(shown, { [SHOWN_AS]: kind.shown.name }) : null;
}

/** Whether the type's settings are typed (its JSON escape hatch is then closed). */
export const hasTypedSettings = (nodeType: string): boolean => kindOf(nodeType) !== undefined;

/**
 * The GNS3 properties a create or change sets, for the input contract to check as it checks REST's: the typed
 * member, which must be the node type's, or the JSON escape hatch (`hatch`: its input field) for a type without
 * typed settings. Undefined: neither was given.
 */
export function propertiesFromInput(
  nodeType: string,
  settings: Record<string, unknown> | null | undefined,
  json: unknown,
  hatch: string,
): unknown {
  const kind = kindOf(nodeType);
  if (json != null && kind) {
    throw new InvalidInputError(`${hatch} is only for node types without typed settings: ${nodeType} takes settings.${kind.member}`, { target: hatch });
  }
  if (!settings) return json ?? undefined;
  // @oneOf: exactly one member is there.
  const [member, given] = Object.entries(settings).find(([, v]) => v != null)!;
  if (kind?.member !== member) {
    const instead = kind ? `settings.${kind.member}` : `${hatch} (the type has no typed settings)`;
    throw new InvalidInputError(`settings.${member} does not apply to the node type ${nodeType}: it takes ${instead}`, { target: `settings.${member}` });
  }
  return kind.toProperties(given as object);
}
