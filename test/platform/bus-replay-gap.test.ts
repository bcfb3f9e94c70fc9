import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createBus, REPLAY_WINDOW, type EventBus } from "../../src/platform/events.js";
import { REDIS_URL, redisUp } from "../support/redis.js";

/**
 * Issue 22 point 5: a subscriber resuming from a cursor the bus can no longer replay from is told so (a ReplayGap)
 * instead of silently missing events — in memory and over Redis (checked against the stream's trimmed ids).
 */
async function gaps(bus: EventBus) {
  const channel = "test:gap" as never;
  const first = await bus.publish(channel, { i: 0 } as never);
  for (let i = 1; i <= REPLAY_WINDOW + 1_000; i++) await bus.publish(channel, { i } as never);
  const last = await bus.lastId();
  const topic = { match: (c: string) => c === "test:gap" };
  const expired = bus.subscribe(topic, { after: first.id });
  expect(await expired.replayed).toEqual({ reason: "EXPIRED", cursor: last });
  const unknown = bus.subscribe(topic, { after: "99999999999999-0" });
  expect(await unknown.replayed).toEqual({ reason: "UNKNOWN", cursor: last });
  // Within the window: no gap, the events after the cursor.
  const recent = await bus.publish(channel, { i: "a" } as never);
  await bus.publish(channel, { i: "b" } as never);
  const fine = bus.subscribe(topic, { after: recent.id });
  expect(await fine.replayed).toBeUndefined();
  expect((await fine.next()).value.data).toEqual({ i: "b" });
  // After a gap, every event published after its cursor, and nothing older.
  await bus.publish(channel, { i: "c" } as never);
  for (const i of ["a", "b", "c"]) expect((await expired.next()).value.data).toEqual({ i });
  for (const s of [expired, unknown, fine]) await s.return();
}

describe("replay gaps", { timeout: 120_000 }, () => {
  it("in memory", async () => {
    const bus = await createBus(undefined);
    await gaps(bus);
    await bus.close();
  });
  it.skipIf(!redisUp)("over Redis", async () => {
    const bus = await createBus({ url: REDIS_URL, keyPrefix: `test-gap-${randomUUID()}:` });
    await gaps(bus);
    await bus.close();
  });
});
