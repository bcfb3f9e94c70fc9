import { createContextCache } from "@pothos/core";
import { NotFoundError } from "../core/errors.js";

/**
 * Keys per `IN (…)` list. A batch of more keys is read in several statements of at most this many: a list of
 * thousands of bind values is slow to plan, and an OR of compound keys overflows SQLite's expression depth.
 */
export const IN_LIST_CHUNK = 500;

interface Batch<R> {
  keys: Set<string>;
  done: Promise<Map<string, R[]>>;
}

/** One request's pending batches, by loader name and selection. */
const batches = createContextCache(() => new Map<string, Batch<unknown>>());

/**
 * A per-request batched read (DataLoader style): every call made with the same `name` and `selection` while the
 * current resolvers run (until the next tick) joins one read of all their keys, in chunks of IN_LIST_CHUNK keys;
 * each call gets the rows whose `keyOf` is its key, in the order the read returned them. Resolvers of the
 * elements of one list run in the same tick, so a relation read for a list costs one statement per chunk, not one
 * per element.
 */
export function batchLoad<R>(
  context: object,
  name: string,
  selection: unknown,
  key: string,
  read: (keys: string[]) => Promise<R[]>,
  keyOf: (row: R) => string,
): Promise<R[]> {
  const pending = batches(context);
  const id = `${name}\u0000${JSON.stringify(selection ?? null)}`;
  let batch = pending.get(id) as Batch<R> | undefined;
  if (!batch) {
    const keys = new Set<string>();
    const done = Promise.resolve()
      .then(() => new Promise<void>((r) => process.nextTick(r)))
      .then(async () => {
        pending.delete(id);
        const all = [...keys];
        const byKey = new Map<string, R[]>();
        for (let i = 0; i < all.length; i += IN_LIST_CHUNK) {
          for (const row of await read(all.slice(i, i + IN_LIST_CHUNK))) {
            const k = keyOf(row);
            const list = byKey.get(k);
            if (list) list.push(row);
            else byKey.set(k, [row]);
          }
        }
        return byKey;
      });
    batch = { keys, done };
    pending.set(id, batch as Batch<unknown>);
  }
  batch.keys.add(key);
  return batch.done.then((byKey) => byKey.get(key) ?? []);
}

/**
 * A `read` for batchLoad from a one-by-one lookup that throws NotFoundError for an id that does not exist (a
 * compute, a template): each distinct id once, the missing ones left out, so their callers answer null.
 */
export const eachFound =
  <R>(get: (id: string) => Promise<R>) =>
  async (ids: string[]): Promise<R[]> =>
    (await Promise.all(ids.map((id) => get(id).catch((e: unknown) => (e instanceof NotFoundError ? null : Promise.reject(e)))))).filter((r): r is Awaited<R> => r !== null);
