import { GraphQLError, isObjectType, Kind, type GraphQLResolveInfo, type GraphQLSchema } from "graphql";
import SchemaBuilder from "@pothos/core";
import ErrorsPlugin from "@pothos/plugin-errors";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin, { resolveNodes } from "@pothos/plugin-relay";
import type PrismaTypes from "../../generated/pothos-types.js";
import { getDatamodel } from "../../generated/pothos-types.js";
import type { AppContext } from "../context.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./connection.js";
import { decodeIfGlobal } from "./global-id.js";
import { checkJsonValue, UnsafeJsonError } from "../http/safe-json.js";
import { ConflictError, DomainError, ERROR_REASONS, ForbiddenError, InvalidInputError, NotFoundError, reasonOf, UnavailableError, UpstreamError } from "../core/errors.js";

export const builder = new SchemaBuilder<{
  Context: AppContext;
  PrismaTypes: PrismaTypes;
  Scalars: {
    // graphql-js hands every ID input over as a string (an integer literal too).
    ID: { Input: string; Output: string | number };
    DateTime: { Input: Date; Output: Date };
    BigInt: { Input: bigint; Output: bigint | number };
    JSON: { Input: unknown; Output: unknown };
    /** An upload (./upload.ts): input only. */
    File: { Input: File; Output: never };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ErrorsPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  // Only the product's own errors become typed results; anything else stays an opaque GraphQL error
  // (so database messages never leak). A result union holds the answer itself (`Volume | NotFoundError`), not a
  // `…Success { data }` wrapper: a field whose answer cannot be a union member (a scalar, a list, an interface)
  // opts out with `directResult: false`, and the schema lint allows the wrapper only there.
  errors: { defaultTypes: [], directResult: true },
  prisma: {
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    onUnusedQuery: null,
    // A larger `first`/`last` never reaches a resolver: the cost check refuses it first (connection.ts).
    maxConnectionSize: MAX_PAGE_SIZE,
    defaultConnectionSize: DEFAULT_PAGE_SIZE,
  },
  relay: {
    clientMutationId: "omit",
    // A string that is no global id names no entity: node(id:) answers null for it (lookup.ts), not BAD_USER_INPUT.
    decodeGlobalID: (raw) => decodeIfGlobal(raw) ?? { typename: "", id: raw },
    nodeTypeOptions: { description: "An entity with a global id: a project, node, link, drawing, snapshot, template, compute, SVM, volume, qtree, quota rule or job" },
    idFieldOptions: { description: "The entity's global id: opaque, unique across every type; a cache key and what `node(id:)` and id arguments take" },
    nodeQueryOptions: {
      description: "The entity with this global id (null when it does not exist)",
      args: { id: { description: "A global id (an entity's `id`)" } },
      resolve: (_root, { id }, _ctx, info, resolveNode) => (namesEntity(info.schema, id) ? resolveNode(id) : null),
    },
    nodesQueryOptions: {
      description: `The entities with these global ids, in the same order (null for one that does not exist)`,
      args: { ids: { description: `Global ids (entities' \`id\`), at most ${MAX_PAGE_SIZE}` } },
      // As many as a page holds, so one request's cost stays what the cost model counted.
      resolve: (_root, { ids }, ctx, info) => {
        if (ids.length > MAX_PAGE_SIZE) {
          throw new GraphQLError(`nodes(ids:) takes at most ${MAX_PAGE_SIZE} ids (${ids.length} given)`, { extensions: { code: "EXCESSIVE_PAGINATION", argument: "ids", requested: ids.length, maximum: MAX_PAGE_SIZE } });
        }
        return entitiesOf(ctx, info, ids);
      },
    },
    cursorType: "String",
    // The paging vocabulary, described once for every connection (generated types take their descriptions
    // from the field they answer: describe-generated.ts).
    firstArgOptions: { description: `At most this many elements from the start of the list (after \`after\`), up to ${MAX_PAGE_SIZE}; ${DEFAULT_PAGE_SIZE} when neither \`first\` nor \`last\` is given` },
    afterArgOptions: { description: "Only the elements after this cursor (a page's `pageInfo.endCursor`)" },
    lastArgOptions: { description: `At most this many elements from the end of the list (before \`before\`), up to ${MAX_PAGE_SIZE}` },
    beforeArgOptions: { description: "Only the elements before this cursor (a page's `pageInfo.startCursor`)" },
    pageInfoTypeOptions: { description: "Where a page sits in its list, and the cursors to ask for the next or previous one" },
    hasNextPageFieldOptions: { description: "More elements follow this page: ask again with `after: endCursor`" },
    hasPreviousPageFieldOptions: { description: "More elements precede this page: ask again with `before: startCursor`" },
    startCursorFieldOptions: { description: "The cursor of the page's first element (null on an empty page)" },
    endCursorFieldOptions: { description: "The cursor of the page's last element (null on an empty page)" },
    edgesFieldOptions: { description: "The page's elements, in the list's order, each with its cursor" },
    pageInfoFieldOptions: { description: "Whether more pages follow or precede, and the cursors to ask for them" },
    cursorFieldOptions: { description: "An opaque position in the list: pass it as `after` or `before` to page from here" },
  },
});

/**
 * A global id decodes to any type name: only an entity's (a type implementing Node) names something `node(id:)`
 * can find; another is null, as an unknown id is (platform/graphql/lookup.ts), not an internal error.
 */
function namesEntity(schema: GraphQLSchema, id: { typename: string }): boolean {
  const type = schema.getType(id.typename);
  return isObjectType(type) && type.getInterfaces().some((i) => i.name === "Node");
}

/** What `nodes(ids:)` answers: the plugin's loader, given only the ids of entities (it answers null for a null one). */
function entitiesOf(ctx: AppContext, info: GraphQLResolveInfo, ids: { typename: string; id: string }[]): Promise<unknown[]> {
  return resolveNodes(builder, ctx, info, ids.map((id) => (namesEntity(info.schema, id) ? id : null)));
}

builder.queryType({ description: "Reads: network-emulation labs (projects, nodes, links, templates, computes) and storage quotas (SVMs, volumes, qtrees, quota rules and reports)" });
builder.mutationType({ description: "Changes: build and run labs, and manage storage volumes, qtrees and quota rules; each answers the changed thing or a typed error" });
builder.subscriptionType({ description: "Live streams: a project's changes, a node's console, a link's packets, quota changes" });

builder.scalarType("DateTime", {
  description: "A point in time, as an ISO 8601 string in UTC (2026-01-31T12:00:00.000Z)",
  serialize: (d) => d.toISOString(),
  parseValue: (v) => {
    const d = typeof v === "string" ? new Date(v) : new Date(NaN);
    if (Number.isNaN(d.getTime())) throw new TypeError("DateTime must be an ISO 8601 string");
    return d;
  },
});

function parseBigInt(v: unknown): bigint {
  if (!((typeof v === "number" && Number.isInteger(v)) || (typeof v === "string" && /^-?\d+$/.test(v)))) {
    throw new TypeError("BigInt must be an integer or a string of digits");
  }
  return BigInt(v); // the range is the input's (storage/core/schema.ts int64): its error is a typed result naming the field
}

builder.scalarType("BigInt", {
  description: "A 64-bit integer: a JSON number when it is exactly representable, else a decimal string",
  serialize: (n) => (Number.isSafeInteger(Number(n)) ? Number(n) : String(n)),
  parseValue: parseBigInt,
  // A literal's digits as written: read as a JS number first, 9223372036854775807 would round out of range.
  parseLiteral: (ast) => parseBigInt(ast.kind === Kind.INT || ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType("JSON", {
  description: "A free-form JSON value, where the shape depends on something else (emulator properties by node type, packet filters, GNS3 payloads)",
  serialize: (v) => v,
  // Literals reach parseValue too (graphql-js converts them first): one check for prototype keys and depth.
  parseValue: (v) => {
    try {
      checkJsonValue(v);
    } catch (err) {
      if (err instanceof UnsafeJsonError) throw new TypeError(err.message);
      throw err;
    }
    return v;
  },
});

/**
 * GraphQL enum values for GNS3 vocabularies: `spice+agent` → SPICE_AGENT, value kept as GNS3 spells it, each
 * value with what it means to the user.
 */
export const enumValues = <T extends string>(values: readonly T[], descriptions: Record<T, string>) =>
  Object.fromEntries(values.map((v) => [v.toUpperCase().replace(/[^A-Z0-9]/g, "_"), { value: v, description: descriptions[v] }])) as Record<string, { value: T; description: string }>;

const ErrorCode = builder.enumType("ErrorCode", {
  description: "Why an operation failed, for programs to branch on",
  values: enumValues(ERROR_REASONS, {
    invalid_input: "The input was rejected: a wrong type, an unknown or missing field, a value out of range",
    too_large: "A file or body beyond its configured limit",
    not_found: "A referenced object does not exist (also: deleting what does not exist)",
    conflict: "The current state does not allow the operation (busy, in use, a prerequisite missing)",
    already_exists: "The chosen id or unique name is taken",
    duplicate_rule: "A quota rule for the same target already exists on the volume",
    port_in_use: "The console or UDP port asked for is taken",
    project_closed: "The project must be opened first",
    forbidden: "The operation is not allowed on this server",
    unavailable: "A dependency (a remote compute, an emulator) did not answer in time",
    upstream_failed: "A dependency (a remote compute) failed with an internal error of its own",
  }),
});

/** Every typed error result implements this interface. */
export const ErrorInterface = builder.interfaceRef<DomainError>("Error").implement({
  description: "Why an operation did not do what was asked: every typed error result has these fields",
  fields: (t) => ({
    message: t.exposeString("message", { description: "What went wrong, for a person to read" }),
    code: t.field({ type: ErrorCode, description: "Why, for programs to branch on", resolve: (e) => reasonOf(e) }),
    target: t.string({ nullable: true, description: "The input field or argument at fault, when there is one", resolve: (e) => e.detail.target ?? null }),
    ontapCode: t.string({
      nullable: true,
      description: "The ONTAP error number a storage error has on the ONTAP REST API (e.g. 5308572 for a duplicate quota rule)",
      resolve: (e) => (e.detail.code && /^\d+$/.test(e.detail.code) ? e.detail.code : null),
    }),
  }),
});

const errorTypes = [
  [InvalidInputError, "InvalidInputError", "The input was rejected (wrong type, unknown or missing field)"],
  [NotFoundError, "NotFoundError", "A referenced object does not exist"],
  [ConflictError, "ConflictError", "The current state does not allow the operation"],
  [ForbiddenError, "ForbiddenError", "The operation is not allowed here"],
  [UnavailableError, "UnavailableError", "A dependency did not answer in time"],
  [UpstreamError, "UpstreamError", "A dependency (a remote compute) failed with an internal error of its own"],
] as const;
for (const [cls, name, description] of errorTypes) {
  builder.objectType(cls as unknown as typeof InvalidInputError, {
    name,
    description,
    interfaces: [ErrorInterface],
    isTypeOf: (e) => e instanceof cls,
  });
}

/**
 * With plugin-errors, a selection of only `__typename` hands the resolver an empty `select`, which Prisma 7
 * rejects; drop it (a connection's page arguments stay).
 */
export function usableQuery<Q extends object>(query: Q): Q {
  const { select, ...rest } = query as Q & { select?: object };
  return select && Object.keys(select).length === 0 ? (rest as Q) : query;
}
