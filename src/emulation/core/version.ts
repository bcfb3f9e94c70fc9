import { ConflictError } from "../../platform/core/errors.js";

/**
 * The GNS3 server version Patchbay answers as. GNS3 clients (GUI, web UI) refuse a server whose version differs
 * from theirs, so this is the 2.2 release whose wire behaviour we follow.
 */
export const GNS3_VERSION = "2.2.59";

/** POST /v2/version: a client states its version; anything but ours is a conflict, worded as GNS3 words it. */
export function checkClientVersion(version: string): string {
  if (version !== GNS3_VERSION) throw new ConflictError(`Client version ${version} is not the same as server version ${GNS3_VERSION}`);
  return GNS3_VERSION;
}
