import { resolveArrayConnection } from "@pothos/plugin-relay";
import { GraphQLError, type GraphQLField } from "graphql";

/**
 * Relay connections: every collection that can grow is paged with `first`/`after` (or `last`/`before`), answers
 * `edges { cursor node }`, `pageInfo` and, where counting is cheap, `totalCount`. Lists kept in the database are
 * Pothos's `prismaConnection` (a root list) or `relatedConnection` (a relation, planned with its parent: one
 * statement per level whatever the number of parents); lists computed in memory (images, templates) are
 * `arrayPage` pages of the whole list.
 */

/** The most elements one page may hold; `first`/`last` above it is refused (EXCESSIVE_PAGINATION), as GitHub does. */
export const MAX_PAGE_SIZE = 100;
/** Elements of a page when neither `first` nor `last` is given. */
export const DEFAULT_PAGE_SIZE = 20;

/** True for a field paged with `first`/`last` (a connection, or a result union around one). */
export const isPagedField = (field: GraphQLField<unknown, unknown>) => field.args.some((a) => a.name === "first" || a.name === "last");

/**
 * The error for a page larger than MAX_PAGE_SIZE, checked before execution (cost.ts walks every field): GitHub's
 * wording and type, so a client learns the limit instead of getting a silently shorter page.
 */
export function excessivePagination(field: string, argument: string, requested: number): GraphQLError {
  return new GraphQLError(
    `Requesting ${requested} records on the \`${field}\` connection exceeds the \`${argument}\` limit of ${MAX_PAGE_SIZE} records.`,
    { extensions: { code: "EXCESSIVE_PAGINATION", argument, requested, maximum: MAX_PAGE_SIZE } },
  );
}

/** A page of a list held in memory, with its totalCount (cursors are offsets in the list). */
export function arrayPage<T>(args: { first?: number | null; last?: number | null; after?: string | null; before?: string | null }, list: readonly T[]) {
  return resolveArrayConnection({ args, defaultSize: DEFAULT_PAGE_SIZE, maxSize: MAX_PAGE_SIZE }, list) as ReturnType<typeof resolveArrayConnection<T>> & { totalCount: number };
}

/** The `totalCount` field of an in-memory connection (`t.connection`'s second argument). */
export const arrayConnectionOptions = {
  fields: <R>(t: { int: (o: { description: string; resolve: (c: object) => number }) => R }) => ({
    totalCount: t.int({ description: "Elements in the whole list", resolve: (c) => (c as { totalCount?: number }).totalCount ?? 0 }),
  }),
};

/** The schema coordinates of a connection's own types (for read caches that list the fields they hold). */
export const connectionCoordinates = (connection: string) => [
  ...["edges", "pageInfo", "totalCount"].map((f) => `${connection}.${f}`),
  ...["cursor", "node"].map((f) => `${connection}Edge.${f}`),
  ...["endCursor", "hasNextPage", "hasPreviousPage", "startCursor"].map((f) => `PageInfo.${f}`),
];
