import fs from "node:fs";
import path from "node:path";

/**
 * Prisma's query compiler as the bundle loads it: scripts/build.mjs decodes each generated client's base64 module
 * into a .wasm file beside the bundle and rewrites the client's loader to call this. V8 compiles it on its worker
 * threads (WebAssembly.compile) instead of the main thread parsing, decoding and compiling 2.2 MB of base64 text
 * that the heap then keeps. Run from the sources (tsx), the generated clients still load their own base64 module.
 */
/** `file`: the name the build gave it in dist/. */
export async function queryCompilerModule(file: string): Promise<WebAssembly.Module> {
  return new WebAssembly.Module(fs.readFileSync(path.join(import.meta.dirname, file)));
}
