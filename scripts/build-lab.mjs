// The lab page's bundle (issue 23): web/lab/ → dist/lab/ (index.html, lab.js, lab.css) with esbuild, from the
// libraries npm installed (cytoscape, xterm.js, graphql-ws): nothing is fetched at run time, the page works offline.
// scripts/build.mjs runs it as part of every build (so `npm install` and `npm ci` produce it); the server only
// reads these files when the page is asked for (src/platform/http/lab-page.ts).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(import.meta.dirname, "..");
export const LAB_SOURCES = path.join(ROOT, "web", "lab");
export const LAB_OUT = path.join(ROOT, "dist", "lab");

export async function buildLab() {
  const esbuild = createRequire(import.meta.url)("esbuild");
  // Built beside and swapped in whole: a server answering meanwhile serves the old page or the new one.
  const tmp = `${LAB_OUT}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    await esbuild.build({
      entryPoints: { lab: path.join(LAB_SOURCES, "main.ts") },
      outdir: tmp,
      bundle: true,
      minify: true,
      format: "iife",
      platform: "browser",
      target: ["chrome109", "firefox115", "safari16"],
      legalComments: "linked", // the libraries' licence notes, in lab.js.LEGAL.txt
      logLevel: "error",
    });
    fs.copyFileSync(path.join(LAB_SOURCES, "index.html"), path.join(tmp, "index.html"));
    // Served compressed to clients that accept it (lab-page.ts): ~820 KB of script is ~240 KB on the wire.
    for (const f of ["lab.js", "lab.css"]) {
      fs.writeFileSync(path.join(tmp, `${f}.gz`), zlib.gzipSync(fs.readFileSync(path.join(tmp, f)), { level: 9 }));
    }
    fs.rmSync(LAB_OUT, { recursive: true, force: true });
    fs.renameSync(tmp, LAB_OUT);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  try {
    await buildLab();
  } catch (e) {
    console.error(`patchbay: the lab page's build failed: ${e.message}`);
    process.exit(1);
  }
}
