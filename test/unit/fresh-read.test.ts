import { describe, expect, it } from "vitest";
import { freshRead } from "../../src/platform/fresh-read.js";

describe("unit: freshRead", () => {
  it("gives every caller a read that began after it asked, and shares one among callers that arrive together", async () => {
    let reads = 0;
    const gates: (() => void)[] = [];
    const read = freshRead(async () => {
      const n = ++reads;
      await new Promise<void>((r) => gates.push(r));
      return n;
    });
    const a = read(); // starts read 1
    const b = read(); // read 1 began before b asked: b waits for read 2
    const c = read(); // shares read 2 with b
    expect(reads).toBe(1);
    gates.shift()!();
    expect(await a).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(2);
    const d = read(); // read 2 is in flight: d waits for read 3
    gates.shift()!();
    expect([await b, await c]).toEqual([2, 2]);
    await new Promise((r) => setImmediate(r));
    gates.shift()!();
    expect(await d).toBe(3);
    expect(reads).toBe(3);
  });

  it("hands a failed read's error to its callers and reads again for the next", async () => {
    let fail = true;
    const read = freshRead(async () => {
      if (fail) throw new Error("boom");
      return "ok";
    });
    await expect(read()).rejects.toThrow("boom");
    fail = false;
    expect(await read()).toBe("ok");
  });
});
