import { builder } from "../../platform/graphql/builder.js";
import { CLUSTER } from "./serialize.js";

builder.queryField("storageVersion", (t) =>
  t.string({ description: "The ONTAP release the storage API follows", resolve: () => CLUSTER.version.full }),
);
