import { spawnSync } from "node:child_process";
import path from "node:path";
import type { TestProject } from "vitest/node";

/**
 * Vitest global setup: the tests run the built server, as `npm start` and the package's bin do (the bundle,
 * ./bundle.ts, and the command line, ./cli.ts), so dist/ is rebuilt once before any test when a source changed since
 * the last build (npm ci has built it): ~5 s of CPU after an edit (tsc's incremental build, esbuild), ~0.2 s when
 * nothing changed. In watch mode, before every rerun too.
 */
export default function setup(project: TestProject): void {
  buildIfStale();
  project.onTestsRerun(buildIfStale);
}

function buildIfStale(): void {
  const r = spawnSync(process.execPath, [path.resolve(import.meta.dirname, "../../scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("the build of dist/ failed");
}
