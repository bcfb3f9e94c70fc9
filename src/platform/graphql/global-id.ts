import { decodeGlobalID, encodeGlobalID } from "@pothos/plugin-relay";
import { InvalidInputError } from "../core/errors.js";

/**
 * Global object ids. Every entity's `id` is opaque and unique across types (Relay's `Node.id`: base64 of
 * `Type:domainId`), so a normalised client cache keys it alone and `node(id:)` finds it. An argument that names
 * an entity takes that id; it also takes the domain id (the GNS3 or ONTAP id a REST client or the GUI shows), so
 * ids copied from the other faces keep working — an id of another type is refused, never looked up as this one.
 */
export function domainId(value: string | number, typename: string, target: string): string {
  const raw = String(value);
  const decoded = decodeIfGlobal(raw);
  if (!decoded) return raw;
  if (decoded.typename !== typename) {
    throw new InvalidInputError(`${target}: "${raw}" is an id of type ${decoded.typename}, not ${typename}`, { target });
  }
  return decoded.id;
}

/** The global id of an entity (what its `id` field answers). */
export const globalId = (typename: string, id: string | number): string => encodeGlobalID(typename, id);

/** A global id's parts, or null for a string that is not one (a domain id: a UUID, a number, `local` …). */
export function decodeIfGlobal(raw: string): { typename: string; id: string } | null {
  try {
    const decoded = decodeGlobalID(raw);
    // Only an exact round trip is a global id: base64 decoding is lenient enough to read some UUIDs as one.
    return encodeGlobalID(decoded.typename, decoded.id) === raw ? decoded : null;
  } catch {
    return null;
  }
}
