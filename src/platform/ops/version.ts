import fs from "node:fs";
import path from "node:path";

/** The product version, from package.json (one source for --version, the landing page and the documents). */
export const VERSION: string = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "../../../package.json"), "utf8")).version;
