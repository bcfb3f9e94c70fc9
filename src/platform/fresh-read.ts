/**
 * One read shared by every caller that needs a fresh copy of the same thing (the host's process table, its
 * listening sockets): a caller gets the result of a read that began after it asked. A read in flight began too
 * early for a new caller, so the callers that arrive meanwhile share the next one. However many wait (fifty nodes
 * starting at once, each polling its console), the reads run one after another, never side by side.
 */
export function freshRead<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let queued: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const p = read().finally(() => {
      if (running === p) running = undefined;
    });
    running = p;
    return p;
  };
  return () => {
    if (!running) return start();
    queued ??= running.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      queued = undefined;
      return start();
    });
    return queued;
  };
}

/**
 * freshRead per key (a project): the callers that ask for the same key share reads, as above; a key is forgotten
 * once nobody waits for it.
 */
export function freshReadBy<T>(read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const readers = new Map<string, { get: () => Promise<T>; waiting: number }>();
  return (key) => {
    let r = readers.get(key);
    if (!r) readers.set(key, (r = { get: freshRead(() => read(key)), waiting: 0 }));
    const reader = r;
    reader.waiting++;
    return reader.get().finally(() => {
      if (--reader.waiting === 0 && readers.get(key) === reader) readers.delete(key);
    });
  };
}
