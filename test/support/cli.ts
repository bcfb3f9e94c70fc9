import path from "node:path";

/** The command line as users run it (`npm start`, the package's bin): the built server, one node process. */
export const CLI = [path.resolve(import.meta.dirname, "../../dist/launch.js")];
