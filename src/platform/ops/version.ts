import fs from "node:fs";
import { packagePath } from "../core/package-root.js";

/** The product version, from package.json (one source for --version, the landing page and the documents). */
export const VERSION: string = JSON.parse(fs.readFileSync(packagePath("package.json"), "utf8")).version;
