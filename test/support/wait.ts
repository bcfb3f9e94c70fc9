/**
 * Polls `check` until it returns something truthy and returns that; throws after `ms`. Tests wait on the
 * condition they need with this instead of sleeping a fixed time and hoping it was enough.
 */
export async function waitFor<T>(check: () => T | Promise<T>, ms = 5000, what = "condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${ms} ms`);
    await pause(20);
  }
}

/**
 * Waits a fixed time: only for asserting that something does NOT happen (an event that must not come, a
 * project that must stay open), where no condition can end the wait early.
 */
export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
