// The entry of dist/patchbay.cjs (scripts/build.mjs): one file that is both the program and, for the tests, the
// server as a library. Requiring it runs nothing: dist/launch.js calls `main`, the tests call `library`
// (test/support/bundle.ts). Both load on call, so --help and usage errors still answer before the server's modules
// are initialized.
export const main = (): Promise<unknown> => import("./main.js");
export const library = () => import("./library.js");
