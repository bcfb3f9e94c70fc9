import fs from "node:fs";
import path from "node:path";
import type { RequestHandler } from "express";
import { packagePath } from "../core/package-root.js";

/**
 * The lab page (issue 23): `GET /lab` and its two assets, built from web/lab/ into dist/lab/ by the build
 * (scripts/build-lab.mjs, run by `npm install`). The page is a client of the GraphQL API only (graphql-ws at
 * /graphql); it is served behind the same origin policy and credentials as every route (server.ts mounts it after
 * them), and nothing of it is read before it is asked for.
 *
 * Only these names are served (the page, its script and style, and their licence notes) — no path from the request reaches the file system. Scripts go out as
 * `application/javascript`, with `nosniff`, revalidated on every load (`no-cache` with ETag and Last-Modified: a
 * rebuild shows at once, a reload is a 304), gzip-compressed from the build's `.gz` copy when the client accepts
 * it. The page's Content-Security-Policy allows only this origin's script, style and socket (drawings' SVG are
 * shown as `data:` images, which run no script).
 */
const FILES: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/lab.js": { file: "lab.js", type: "application/javascript; charset=utf-8" },
  "/lab.css": { file: "lab.css", type: "text/css; charset=utf-8" },
  // The libraries' licence notes, which the bundles name in their first comment.
  "/lab.js.LEGAL.txt": { file: "lab.js.LEGAL.txt", type: "text/plain; charset=utf-8" },
  "/lab.css.LEGAL.txt": { file: "lab.css.LEGAL.txt", type: "text/plain; charset=utf-8" },
};

const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Mounted at /lab (controller mode). `dir`: the built page, dist/lab by default. */
export function labPage(dir = packagePath("dist", "lab")): RequestHandler {
  return (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    // `/lab` and `/lab/` are the page; its assets are named relative to /lab/.
    const entry = FILES[req.path === "" ? "/" : req.path];
    if (!entry) return next();
    const file = path.join(dir, entry.file);
    const gzipped = `${file}.gz`;
    const useGzip = req.acceptsEncodings(["gzip", "identity"]) === "gzip" && fs.existsSync(gzipped);
    if (!fs.existsSync(file)) {
      res.status(503).type("text/plain").send("The lab page is not built: run `npm run build` (npm install builds it).\n");
      return;
    }
    res.type(entry.type);
    res.set({ "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff", Vary: "Accept-Encoding" });
    if (entry.file === "index.html") res.set({ "Content-Security-Policy": CSP, "Referrer-Policy": "same-origin" });
    if (useGzip) res.set("Content-Encoding", "gzip");
    res.sendFile(useGzip ? gzipped : file, { cacheControl: false, etag: true, lastModified: true }, (error) => {
      if (error && !res.headersSent) res.status(500).type("text/plain").send("The lab page could not be read.\n");
    });
  };
}
