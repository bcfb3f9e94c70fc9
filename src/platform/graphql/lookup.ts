import { InvalidInputError, NotFoundError } from "../core/errors.js";

/**
 * Issue 22's rule for reads by id (`volume(id:)`, `project(id:)` …): a lookup answers the entity, or null when
 * nothing has that id — a malformed id or another type's id included, as Relay's `node(id:)` answers. Absence is
 * never an error there; a lookup that can also be refused (a node of a closed project) answers a union of the
 * entity and the refusals it can raise (`ForbiddenError`), still null for absence.
 */
export async function orNull<T>(find: () => Promise<T | null> | T | null): Promise<T | null> {
  try {
    return await find();
  } catch (e) {
    // The id is the lookup's only input: an invalid one names nothing, like an unknown one.
    if (e instanceof NotFoundError || e instanceof InvalidInputError) return null;
    throw e;
  }
}

/** A lookup's description: what it answers, that null means nothing has the id, and when it is refused. */
export const lookupDescription = (what: string, refused?: string) => `${what} (null when nothing has this id${refused ? `; ${refused}` : ""})`;
