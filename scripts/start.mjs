// `npm start`: the compiled server (dist/launch.js, which runs the bundle) in this process, rebuilt first when src/ changed since the last
// build (a git pull, an edit), so the README's `npm start` always runs the sources in the tree. The check is a few
// milliseconds; the package's `bin` runs dist/launch.js directly. Development without a build: `npm run dev` (tsx).
import { buildIfStale } from "./build.mjs";

try {
  await buildIfStale();
} catch (e) {
  console.error(`patchbay: ${e.message}`);
  process.exit(1);
}
await import("../dist/launch.js");
