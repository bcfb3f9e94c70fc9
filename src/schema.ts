import { type GraphQLSchema, lexicographicSortSchema, printSchema } from "graphql";
// Importing a feature's graphql module registers its types on the shared builder.
import { builder } from "./platform/graphql/builder.js";
import { describeGenerated } from "./platform/graphql/describe-generated.js";
import "./emulation/graphql.js";
import "./storage/graphql.js";

/**
 * The schema, built once. Unsorted: sorting rebuilds every type and only the printed form needs it
 * (`printedSchema`).
 */
let built: GraphQLSchema | undefined;
export const graphqlSchema = (): GraphQLSchema => (built ??= describeGenerated(builder.toSchema()));

/** The schema as schema.graphql holds it (sorted SDL): what `npm run schema:print` writes and the parity test reads. */
export const printedSchema = (): string => printSchema(lexicographicSortSchema(graphqlSchema())) + "\n";
