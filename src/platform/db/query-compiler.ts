import fs from "node:fs";
import path from "node:path";

/**
 * Prisma's query compiler as the bundle loads it: scripts/build.mjs decodes each generated client's base64 module
 * into a .wasm file beside the bundle and rewrites the client's loader to call this, so no start parses and decodes
 * 2.2 MB of base64 text that the heap then keeps. Compiled on the main thread: WebAssembly.compile ran Liftoff on
 * V8's worker threads, whose malloc arenas kept ~8 MB, and started no sooner (docs/benchmarks.md). Run from the
 * sources (tsx), the generated clients still load their own base64 module. `file`: the name the build gave it.
 */
export async function queryCompilerModule(file: string): Promise<WebAssembly.Module> {
  return new WebAssembly.Module(fs.readFileSync(path.join(import.meta.dirname, file)));
}
