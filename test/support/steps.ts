/**
 * One step of a flow test: a story (build a lab, start it, ping, capture, stop) is one `it`, because each step
 * needs the state the previous one left; the step's name prefixes a failure so the report still says which
 * step broke.
 */
export async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof Error) e.message = `step "${name}": ${e.message}`;
    throw e;
  }
}
