import type { InputObjectRef, ObjectRef } from "@pothos/core";
import type { builder } from "../../platform/graphql/builder.js";

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * One node type's typed settings in GraphQL: the object that shows them (a node's, or a template's defaults for
 * the nodes made from it), the input that sets them, and that input under GNS3's property names — which the node's
 * (or the template's) input contract then checks exactly as it checks a REST body.
 */
export interface SettingsKind<Shown extends object, Given extends object> {
  /** The field of NodeSettingsInput that holds this type's input. */
  member: string;
  shown: ObjectRef<Types, Shown>;
  /**
   * The typed view of stored properties (null: they cannot be read so, e.g. imported malformed); `nodeId` null for a
   * template, where what each node derives stays unset.
   */
  read(properties: Record<string, unknown>, nodeId: string | null): Shown | null;
  given: InputObjectRef<Types, Given>;
  /** The given fields as GNS3 properties (snake_case); fields not given are left out, so an update merges them. */
  toProperties(input: Given): Record<string, unknown>;
}

/** A settings kind whose shapes are checked where it is declared (the registry holds them side by side). */
export type AnySettingsKind = SettingsKind<any, any>;

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Given input fields under GNS3's names: snake_case (`adapterType` → `adapter_type`) unless `renames` names another
 * (`ramMb` → `ram`: a unit in the GraphQL name only); absent fields are left out.
 */
export function gns3Names(input: object, renames: Readonly<Record<string, string>> = {}): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).flatMap(([k, v]) => (v === undefined ? [] : [[renames[k] ?? snakeCase(k), v]])));
}

/** The usage note (free text for lab users) stored in properties; "" when there is none. */
export const usageOf = (properties: Record<string, unknown>): string => (typeof properties.usage === "string" ? properties.usage : "");
