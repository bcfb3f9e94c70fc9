/** What every storage delete's payload lists, so a client evicts them from its cache. */
export const DELETED_IDS = "The global ids of everything the delete removed, cascades included: evict them from a cache";
