import { InvalidInputError, NotFoundError } from "../../platform/core/errors.js";

/** What every storage delete's payload lists, so a client evicts them from its cache. */
export const DELETED_IDS = "The global ids of everything the delete removed, cascades included: evict them from a cache";

/** What a storage look-up by id can fail with: an id of another type, or no such entity. */
export const LOOKUP_ERRORS = { types: [InvalidInputError, NotFoundError] };
