// The production build: src/ → dist/ with tsc (tsconfig.build.json), plus the files the server reads next to its
// modules (e.g. the built-in symbols). `npm run build`; `npm install` runs it, and `npm start` runs it when src/ is
// newer than the last build (scripts/start.mjs). Run directly, it builds unconditionally; `--if-stale` builds only
// when needed.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildLab, LAB_SOURCES } from "./build-lab.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const SRC = path.join(ROOT, "src");
const DIST = path.join(ROOT, "dist");
/** Written after a successful build; its time is the build's. */
const STAMP = path.join(DIST, ".built");
/** Besides src/, what changes the output. */
const INPUTS = ["tsconfig.json", "tsconfig.build.json", "scripts/build.mjs", "scripts/build-lab.mjs", "package-lock.json"].map((f) => path.join(ROOT, f));

/** Every file under `dir`, recursively. */
function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? e.path, e.name));
}

/** `dir` and everything under it: a directory's time changes when a source in it is removed or renamed. */
const entries = (dir) => [dir, ...fs.readdirSync(dir, { recursive: true }).map((rel) => path.join(dir, rel))];

/** True when dist/ is missing or older than a source: a few milliseconds (one stat per source file). */
export function isStale() {
  let built;
  try {
    built = fs.statSync(STAMP).mtimeMs;
  } catch {
    return true;
  }
  return [...INPUTS, ...entries(SRC), ...entries(LAB_SOURCES)].some((f) => fs.statSync(f).mtimeMs > built);
}

/** The bundle (dist/launch.js runs it) and, beside it, the code caches starts write for it (patchbay.*.cache). */
const BUNDLE = path.join(DIST, "patchbay.cjs");
const isBundleOutput = (rel) => rel.startsWith("patchbay.") || rel.startsWith(`lab${path.sep}`);

/**
 * dockerode loads its SSH transport (ssh2, with a 16 MB WebAssembly heap for Poly1305) and BuildKit sessions (gRPC,
 * protobufjs) when it is loaded: ~20 MB of memory a server pays as soon as it lists containers (at start, to find a
 * previous run's leftovers, wherever a dockerd socket exists), though it only speaks HTTP to the local socket. Here
 * both are required when first called (an ssh:// DOCKER_HOST, a BuildKit build) instead. Each rewrite must apply: a
 * dockerode or docker-modem update that changes those lines fails the build rather than silently loading them again.
 */
const DEFERRED_REQUIRES = [
  { file: /docker-modem\/lib\/modem\.js$/, from: "ssh = require('./ssh'),", to: "ssh = function (opt) { return require('./ssh')(opt); }," },
  { file: /dockerode\/lib\/docker\.js$/, from: "withSession = require('./session'),", to: "withSession = function () { return require('./session').apply(this, arguments); }," },
];
/** What those load, left outside the bundle too (1.4 MB of source the bundle would hold in memory for nothing). */
const DEFERRED_PACKAGES = ["ssh2", "@grpc/grpc-js", "@grpc/proto-loader"];
const deferredRequires = {
  name: "dockerode-deferred-transports",
  setup(build) {
    build.onLoad({ filter: /(docker-modem|dockerode)[\\/]lib[\\/](modem|docker)\.js$/ }, (args) => {
      let text = fs.readFileSync(args.path, "utf8");
      for (const r of DEFERRED_REQUIRES.filter((r) => r.file.test(args.path.replaceAll("\\", "/")))) {
        if (!text.includes(r.from)) throw new Error(`${args.path} no longer has \`${r.from}\` (scripts/build.mjs, DEFERRED_REQUIRES)`);
        text = text.replace(r.from, r.to);
      }
      return { contents: text, loader: "js" };
    });
  },
};

/** A compiler's file beside the bundle, from its name in @prisma/client/runtime (e.g. query_compiler_small_bg.sqlite). */
const queryCompilerFile = (name) => `patchbay.${name}.wasm`;

/**
 * Prisma's query compilers (WebAssembly) as .wasm files beside the bundle, compiled when first asked for
 * (src/platform/db/query-compiler.ts). The generated clients carry them as a 2.2 MB base64 module each, which every
 * start parsed and decoded on the main thread and whose text the heap then kept (~4 MB). Each
 * generated client's loader is rewritten to ask that module; a Prisma update that changes the loader's lines fails
 * the build instead of silently bundling the base64 again. `names()`: the compilers the bundle asks for.
 */
const QUERY_COMPILER_LOADER =
  /const \{ wasm \} = await import\("@prisma\/client\/runtime\/(query_compiler_\w+_bg\.\w+)\.wasm-base64\.mjs"\);\s*return await decodeBase64AsWasm\(wasm\);/;
function queryCompilersAsWasm() {
  const names = new Set();
  return {
    names: () => [...names],
    plugin: {
      name: "prisma-query-compilers-as-wasm",
      setup(build) {
        build.onLoad({ filter: /generated[\\/]prisma-\w+[\\/]internal[\\/]class\.js$/ }, (args) => {
          const text = fs.readFileSync(args.path, "utf8");
          const m = QUERY_COMPILER_LOADER.exec(text);
          if (!m) throw new Error(`${args.path} no longer loads its query compiler as expected (scripts/build.mjs, QUERY_COMPILER_LOADER)`);
          names.add(m[1]);
          const loader = path.relative(path.dirname(args.path), path.join(DIST, "platform/db/query-compiler.js")).replaceAll("\\", "/");
          const contents = text.replace(m[0], `return await (await import(${JSON.stringify(loader)})).queryCompilerModule(${JSON.stringify(queryCompilerFile(m[1]))});`);
          return { contents, loader: "js" };
        });
      },
    },
  };
}

/** The compilers the bundle asks for, decoded from Prisma's base64 modules into dist/ (renamed into place, as the bundle). */
function writeQueryCompilers(names) {
  const require = createRequire(import.meta.url);
  for (const name of names) {
    const { wasm } = require(`@prisma/client/runtime/${name}.wasm-base64.js`);
    const file = queryCompilerFile(name);
    const tmp = path.join(DIST, `${file}.${process.pid}.tmp`);
    fs.writeFileSync(tmp, Buffer.from(wasm, "base64"));
    fs.renameSync(tmp, path.join(DIST, file));
  }
}

/**
 * dist/bundle.js and everything it imports in one CommonJS file, dist/patchbay.cjs: one file to read and compile
 * instead of ~900 modules, and CommonJS because only a classic script takes V8's code cache on Node 20 (launch.ts).
 * Its exports are the program (dist/launch.js runs it) and the server as a library (the tests load it): src/bundle.ts.
 * Left outside: native drivers and addons (the data directory lock's), the GraphiQL page's 9 MB of assets (loaded
 * when the page is first asked for), dockerode's SSH and gRPC dependencies (see DEFERRED_REQUIRES), and Prisma's
 * query compilers (.wasm files beside the bundle; only the database in use loads its own).
 * Code that names files beside itself goes through platform/core/package-root.ts, which works from the bundle too.
 */
async function bundle() {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)("esbuild");
  } catch {
    throw new Error("building dist/ needs the development dependencies (esbuild): run npm install");
  }
  // Written beside and renamed into place: a server starting meanwhile (another test run) reads the old or the new.
  const tmp = `${BUNDLE}.${process.pid}.tmp`;
  const queryCompilers = queryCompilersAsWasm();
  try {
    await esbuild.build({
      entryPoints: [path.join(DIST, "bundle.js")],
      outfile: tmp,
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      // import() becomes require(): a vm.Script (launch.ts) has no module loader for import() without an experimental flag.
      supported: { "dynamic-import": false },
      // "*.node": native addons dockerode's ssh transport tries inside try/catch (ssh2, cpu-features; their builds are denied).
      external: ["libsql", "pg-native", "fs-native-extensions", "@graphql-yoga/render-graphiql", ...DEFERRED_PACKAGES, "*.node"],
      define: { "import.meta.dirname": "__dirname", "import.meta.url": "__import_meta_url" },
      // "use strict" first: after the banner, esbuild's own directive would no longer be one (ES modules are strict).
      banner: { js: '"use strict";\nvar __import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
      plugins: [queryCompilers.plugin, deferredRequires],
      logLevel: "error",
    });
    // ASCII only, so launch.ts can read it as one-byte text (~2 ms instead of ~25-120 ms of UTF-8 decoding): esbuild
    // escapes non-ASCII in code but leaves it in comments, where an escape means the same.
    const text = fs.readFileSync(tmp, "utf8").replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    fs.writeFileSync(tmp, text, "latin1");
    writeQueryCompilers(queryCompilers.names()); // before the bundle that asks for them is in place
    fs.renameSync(tmp, BUNDLE);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  // The caches of the old bundle (V8 would reject them; this only frees the space).
  for (const f of fs.readdirSync(DIST).filter((f) => f.endsWith(".cache"))) fs.rmSync(path.join(DIST, f), { force: true });
}

export async function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  } catch {
    throw new Error("building dist/ needs the development dependencies (typescript): run npm install");
  }
  const r = spawnSync(process.execPath, [tsc, "-p", path.join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  if (r.status !== 0) throw new Error(`tsc failed (exit ${r.status ?? r.signal}): dist/ not updated`);
  // Outputs whose source is gone.
  for (const file of files(DIST)) {
    const rel = path.relative(DIST, file);
    if (rel.startsWith(".") || isBundleOutput(rel)) continue;
    const source = rel.endsWith(".js") ? rel.replace(/\.js$/, ".ts") : rel;
    if (!fs.existsSync(path.join(SRC, source))) fs.rmSync(file);
  }
  await bundle();
  await buildLab(); // the lab page (web/lab → dist/lab): browser code, no part of the server's bundle
  fs.chmodSync(path.join(DIST, "launch.js"), 0o755); // the package's bin: runnable as ./dist/launch.js too
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

export async function buildIfStale() {
  if (!isStale()) return false;
  console.error("patchbay: building dist/ (src/ is newer than the last build) …");
  await build();
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  try {
    if (process.argv.includes("--if-stale")) await buildIfStale();
    else await build();
  } catch (e) {
    console.error(`patchbay: ${e.message}`);
    process.exit(1);
  }
}
