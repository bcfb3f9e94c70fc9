#!/usr/bin/env -S node --max-semi-space-size=4
// The package's bin and what `npm start` runs: the server bundled into one CommonJS file (dist/patchbay.cjs, made
// by scripts/build.mjs from tsc's dist/bundle.js), compiled with V8's code cache. Loading ~900 ES modules one by one
// and compiling them again on every start was most of the start-up time. A young generation of 4 MB semi-spaces
// instead of 16 keeps ~25 MB less RSS at no measured cost. Both: docs/benchmarks.md, "Memory and start".
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";

const BUNDLE = path.join(import.meta.dirname, "patchbay.cjs");
/**
 * V8's compiled code for the bundle, written by a previous start; V8 rejects it when the bundle, node or V8's flags
 * differ. One per node command line (npm start passes --max-semi-space-size, a plain `node dist/launch.js` does not),
 * so the two do not overwrite each other's; the build removes them all.
 */
const CACHE = path.join(
  import.meta.dirname,
  `patchbay.${createHash("sha256").update(`${process.version} ${process.execArgv.join(" ")}`).digest("hex").slice(0, 12)}.cache`,
);
/** Long enough after start for the functions start-up runs to be compiled, and so kept in the cache. */
const CACHE_AFTER_MS = 4000;

// The flag the database client sets (platform/db/client.ts), set before compiling: V8 checks its flags' hash when
// the cache is read, and the cache is written after the client has set it.
v8.setFlagsFromString("--liftoff-only");

/**
 * The bundle compiled, with the cache when there is one. In a function: the text read (8 MB) and the cache (3-5 MB)
 * are garbage once compiled (V8 keeps its own flat copy of the wrapped source), where module-level constants would
 * hold them for the life of the process.
 */
function compile(): vm.Script {
  const source = fs.readFileSync(BUNDLE, "latin1"); // ASCII only (scripts/build.mjs): no UTF-8 decoding needed
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(CACHE);
  } catch {}
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: BUNDLE, cachedData });
  if (!cachedData || script.cachedDataRejected) {
    setTimeout(() => {
      // Best effort: a read-only install still starts, only without the cache. Renamed into place, so a concurrent
      // start reads a whole file or none.
      try {
        const tmp = `${CACHE}.${process.pid}`;
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, CACHE);
      } catch {}
    }, CACHE_AFTER_MS).unref();
  }
  return script;
}

const module = { exports: {} as typeof import("./bundle.js") };
compile().runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, path.dirname(BUNDLE));
// Loading the bundle runs nothing (it is the tests' library too): the program starts here.
void module.exports.main();
