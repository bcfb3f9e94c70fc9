import { builder } from "../../platform/graphql/builder.js";
import { CLUSTER } from "./serialize.js";

builder.queryField("storageVersion", (t) =>
  t.string({ description: "The ONTAP release the storage API follows", resolve: () => CLUSTER.version.full }),
);

const ClusterVersion = builder.objectRef<(typeof CLUSTER)["version"]>("ClusterVersion").implement({
  description: "The ONTAP release the storage API follows, whole and in parts",
  fields: (t) => ({
    full: t.exposeString("full", { description: "The release as ONTAP prints it" }),
    generation: t.exposeInt("generation", { description: "The generation (9 in 9.14.1)" }),
    major: t.exposeInt("major", { description: "The major number (14 in 9.14.1)" }),
    minor: t.exposeInt("minor", { description: "The minor number (1 in 9.14.1)" }),
  }),
});
const Cluster = builder.objectRef<typeof CLUSTER>("Cluster").implement({
  description: "The storage cluster this server presents: its name, identity and ONTAP release",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The cluster's name" }),
    uuid: t.exposeID("uuid", { description: "The cluster's uuid" }),
    version: t.field({ type: ClusterVersion, description: "The ONTAP release the storage API follows", resolve: (c) => c.version }),
  }),
});

builder.queryField("cluster", (t) => t.field({ type: Cluster, description: "The storage cluster", resolve: () => CLUSTER }));
