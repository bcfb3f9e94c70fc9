/**
 * The GNS3 server version Patchbay answers as. GNS3 clients (GUI, web UI) refuse a server whose version differs
 * from theirs, so this is the 2.2 release whose wire behaviour we follow.
 */
export const GNS3_VERSION = "2.2.59";
