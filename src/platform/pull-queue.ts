/**
 * A pull-based queue as an AsyncIterableIterator: values pushed are read in order by one consumer; a consumer slower
 * than the producer keeps at most `backlog` values (then the oldest go). end() lets the consumer drain what is queued
 * and finish; fail() makes its next read throw; return() (the consumer leaving) drops the queue and calls `onReturn`
 * once. The event bus's subscriptions and the readers of a shared GraphQL execution are both this.
 */
export class PullQueue<T> implements AsyncIterableIterator<T> {
  private queue: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | undefined;
  private failure: { error: unknown } | undefined;
  private done = false;
  private returned = false;

  constructor(
    private readonly backlog: number,
    private readonly onReturn: () => void,
  ) {}

  protected get ended(): boolean {
    return this.done;
  }

  push(value: T): void {
    if (this.done) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = undefined;
      w({ value, done: false });
      return;
    }
    this.queue.push(value);
    if (this.queue.length > this.backlog) this.queue.shift();
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.end();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length) return Promise.resolve({ value: this.queue.shift()!, done: false });
    if (this.failure) {
      const { error } = this.failure;
      this.failure = undefined;
      return Promise.reject(error);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.returned) {
      this.returned = true;
      this.queue = [];
      this.onReturn();
      this.end();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}
