import { builder } from "../../platform/graphql/builder.js";
import { CLUSTER } from "./serialize.js";

builder.queryField("storageVersion", (t) =>
  t.string({ description: "The ONTAP release the storage API follows", resolve: () => CLUSTER.version.full }),
);

const ClusterVersion = builder.objectRef<(typeof CLUSTER)["version"]>("ClusterVersion").implement({
  fields: (t) => ({
    full: t.exposeString("full"),
    generation: t.exposeInt("generation"),
    major: t.exposeInt("major"),
    minor: t.exposeInt("minor"),
  }),
});
const Cluster = builder.objectRef<typeof CLUSTER>("Cluster").implement({
  description: "What GET /api/cluster reports",
  fields: (t) => ({
    name: t.exposeString("name"),
    uuid: t.exposeID("uuid"),
    version: t.field({ type: ClusterVersion, resolve: (c) => c.version }),
  }),
});

builder.queryField("cluster", (t) => t.field({ type: Cluster, resolve: () => CLUSTER }));
