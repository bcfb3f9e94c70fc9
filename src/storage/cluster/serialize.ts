/** What GET /api/cluster reports: the ONTAP release whose REST behaviour Patchbay follows. */
export const CLUSTER = {
  name: "patchbay",
  uuid: "6a3b9c2e-51f0-4d6e-9f38-1c0f7e2a9b44",
  version: { full: "NetApp Release 9.14.1: Patchbay storage quota emulation", generation: 9, major: 14, minor: 1 },
} as const;
