/**
 * Runs tasks one at a time per key, in call order; a failed task does not stop the next one (its caller gets the
 * error). Keys with nothing queued are dropped, so the map stays as small as the work in flight.
 */
export class KeyedQueue {
  private tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(
      () => task(),
      () => task(),
    );
    const settled = next.catch(() => {});
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return next;
  }
}
