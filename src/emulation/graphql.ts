// Registers the emulation GraphQL types on the shared builder (one import per area).
import { builder } from "../platform/graphql/builder.js";
import { GNS3_VERSION } from "./core/version.js";
import "./nodes/lifecycle-graphql.js";
import "./links/capture-graphql.js";
import "./consoles/graphql.js";
import "./server/graphql.js";
import "./computes/graphql.js";
import "./symbols/graphql.js";
import "./simvm/graphql.js";
import "./projects/graphql.js";
import "./snapshots/graphql.js";
import "./nodes/graphql.js";
import "./compute-api/docker-graphql.js";
import "./links/graphql.js";
import "./templates/graphql.js";
import "./templates/node-template-graphql.js";
import "./drawings/graphql.js";
import "./notifications/graphql.js";
import "./images/graphql.js";
// files and archives: uploads and signed download URLs
import "./projects/graphql-files.js";
import "./nodes/graphql-files.js";
import "./links/graphql-files.js";
import "./symbols/graphql-files.js";

builder.queryField("emulationVersion", (t) =>
  t.string({ description: "The GNS3 server version the emulation API is compatible with", resolve: () => GNS3_VERSION }),
);
