// Importing a feature's graphql module registers its types on the shared builder.
import { builder } from "./platform/graphql/builder.js";
import "./emulation/graphql.js";
import "./storage/graphql.js";

export const schema = builder.toSchema({ sortSchema: true });
