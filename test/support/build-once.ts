import { spawnSync } from "node:child_process";
import path from "node:path";

/**
 * Vitest global setup: the tests that start the command line run the built CLI, as `npm start` and the package's
 * bin do, so dist/ is rebuilt once before any test when src/ changed since the last build (npm ci has built it).
 */
export default function setup(): void {
  const r = spawnSync(process.execPath, [path.resolve(import.meta.dirname, "../../scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("the build of dist/ failed");
}
