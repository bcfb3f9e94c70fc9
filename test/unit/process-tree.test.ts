import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { descendants, isAlive } from "../../src/emulation/runtime/processes.js";

/** A running node's processes are found below the process the runtime spawned, without reading environments. */
describe.skipIf(process.platform !== "linux")("unit: descendants of a spawned process", () => {
  it("finds the process, its children and grandchildren, and nothing once they are gone", async () => {
    const child = spawn("/bin/sh", ["-c", "sleep 30 & (sleep 30 & wait) & wait"], { stdio: "ignore" });
    try {
      let found: number[] = [];
      for (let i = 0; i < 100 && found.length < 4; i++) {
        found = await descendants(child.pid!);
        await new Promise((r) => setTimeout(r, 20));
      }
      // sh, sleep, the subshell and its sleep (dash forks the subshell; nothing else below).
      expect(found).toContain(child.pid);
      expect(found.length).toBeGreaterThanOrEqual(4);
      expect(found).not.toContain(process.pid);
      for (const pid of found) process.kill(pid, "SIGKILL");
      for (let i = 0; i < 100 && found.some(isAlive); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await descendants(child.pid!)).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
