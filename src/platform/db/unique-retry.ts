/**
 * Concurrent writers can pick the same unique value (a name, a console port); the unique index catches it and we
 * try again (with jitter, so that a burst of writers spreads out instead of colliding round after round).
 */
export async function withUniqueRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if ((e as { code?: string }).code !== "P2002" || attempt >= 20) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 10 * (attempt + 1)));
    }
  }
}
