/**
 * Calls gathered into batches: the calls made while a batch is being carried out (or in the same tick as the first)
 * wait for the next one, so that fifty nodes recording their state as each comes up cost a few transactions instead
 * of fifty. `flush` answers each item's outcome, in order; a flush that throws fails every item of its batch.
 */
export function batched<I, O>(flush: (items: I[]) => Promise<PromiseSettledResult<O>[]>): (item: I) => Promise<O> {
  let queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  let draining = false;
  const drain = async () => {
    while (queue.length) {
      const batch = queue;
      queue = [];
      let results: PromiseSettledResult<O>[];
      try {
        results = await flush(batch.map((b) => b.item));
      } catch (e) {
        results = batch.map(() => ({ status: "rejected", reason: e }));
      }
      batch.forEach((b, i) => {
        const r = results[i];
        if (r.status === "fulfilled") b.resolve(r.value);
        else b.reject(r.reason);
      });
    }
    draining = false;
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!draining) {
        draining = true;
        queueMicrotask(() => void drain());
      }
    });
}
