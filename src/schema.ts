import type { GraphQLSchema } from "graphql";
// Importing a feature's graphql module registers its types on the shared builder.
import { builder } from "./platform/graphql/builder.js";
import "./emulation/graphql.js";
import "./storage/graphql.js";

/**
 * The schema, built once. Unsorted: sorting rebuilds every type and only the printed form needs it
 * (scripts/print-schema.ts sorts).
 */
let built: GraphQLSchema | undefined;
export const graphqlSchema = (): GraphQLSchema => (built ??= builder.toSchema());
