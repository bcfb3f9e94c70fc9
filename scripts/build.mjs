// The production build: src/ → dist/ with tsc (tsconfig.build.json), plus the files the server reads next to its
// modules (e.g. the built-in symbols). `npm run build`; `npm install` runs it, and `npm start` runs it when src/ is
// newer than the last build (scripts/start.mjs). Run directly, it builds unconditionally; `--if-stale` builds only
// when needed.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(import.meta.dirname, "..");
const SRC = path.join(ROOT, "src");
const DIST = path.join(ROOT, "dist");
/** Written after a successful build; its time is the build's. */
const STAMP = path.join(DIST, ".built");
/** Besides src/, what changes the output. */
const INPUTS = ["tsconfig.json", "tsconfig.build.json", "scripts/build.mjs"].map((f) => path.join(ROOT, f));

/** Every file under `dir`, recursively. */
function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? e.path, e.name));
}

/** True when dist/ is missing or older than a source: a few milliseconds (one stat per source file). */
export function isStale() {
  let built;
  try {
    built = fs.statSync(STAMP).mtimeMs;
  } catch {
    return true;
  }
  return [...INPUTS, ...files(SRC)].some((f) => fs.statSync(f).mtimeMs > built);
}

export function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  } catch {
    throw new Error("building dist/ needs the development dependencies (typescript): run npm install");
  }
  const r = spawnSync(process.execPath, [tsc, "-p", path.join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  if (r.status !== 0) throw new Error(`tsc failed (exit ${r.status ?? r.signal}): dist/ not updated`);
  // Files the server reads at run time next to its modules, and outputs whose source is gone.
  for (const file of files(SRC)) {
    const rel = path.relative(SRC, file);
    if (file.endsWith(".ts") || file.endsWith(".md")) continue;
    fs.mkdirSync(path.dirname(path.join(DIST, rel)), { recursive: true });
    fs.copyFileSync(file, path.join(DIST, rel));
  }
  for (const file of files(DIST)) {
    const rel = path.relative(DIST, file);
    if (rel.startsWith(".")) continue;
    const source = rel.endsWith(".js") ? rel.replace(/\.js$/, ".ts") : rel;
    if (!fs.existsSync(path.join(SRC, source))) fs.rmSync(file);
  }
  fs.chmodSync(path.join(DIST, "main.js"), 0o755); // the package's bin: runnable as ./dist/main.js too
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

export function buildIfStale() {
  if (!isStale()) return false;
  console.error("patchbay: building dist/ (src/ is newer than the last build) …");
  build();
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  try {
    if (process.argv.includes("--if-stale")) buildIfStale();
    else build();
  } catch (e) {
    console.error(`patchbay: ${e.message}`);
    process.exit(1);
  }
}
