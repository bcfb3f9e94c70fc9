import fs from "node:fs";
import path from "node:path";
import type { RequestHandler, Response } from "express";
import { StartupError } from "../ops/startup-errors.js";

/**
 * A GNS3 Web UI build the operator has (PATCHBAY_WEB_UI_DIR), served as gns3-server 2.2.59 serves its bundled copy
 * (compat "Serving the UI"): `GET /static/web-ui/{name}` answers the file of that name under the directory, and
 * any name that is not a file answers the bundle's index.html with 200 — that is how `bundled` (which makes the
 * page's own origin the UI's "local" server) and the UI's deep links (`server/1/project/…`) load. `GET /` then
 * redirects to `/static/web-ui/bundled` (server.ts).
 *
 * Stricter than gns3-server on names, never looser: a name that does not decode is a 400; a name with a backslash
 * or a control character, or with a segment starting with "." (`..`, `.git`, `.env`, also percent-encoded),
 * is a 403; the empty name is a 404. A name's real path (symlinks resolved) must lie inside the directory's real
 * path, else 403: nothing outside the bundle is ever read, whatever links it holds.
 *
 * Types: `.js` as `application/javascript` (as gns3-server, whose guess would otherwise be text/html on some
 * hosts), the rest by extension; `nosniff`. Caching: a file whose name carries a content hash (Angular's
 * `main.3f2a…e1.js`) is immutable for a year; index.html and everything else must be revalidated (`no-cache`,
 * with ETag and Last-Modified, so a reload is a 304), so a new build is picked up at once.
 */
/** Where `GET /` sends a browser when a Web UI is served: the page that registers its own origin as the UI's server. */
export const WEB_UI_ENTRY = "/static/web-ui/bundled";

const HASHED = /[.-][0-9a-f]{16,}\.[a-z0-9]+$/i;
const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "no-cache";

/** The real path of a usable bundle directory (one holding index.html), or a one-line start-up error. */
export function checkWebUiDir(dir: string): string {
  let root: string;
  try {
    root = fs.realpathSync(dir);
  } catch (e) {
    throw new StartupError(`PATCHBAY_WEB_UI_DIR ${dir} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)}): point it at a GNS3 Web UI build`);
  }
  if (!fs.statSync(root).isDirectory()) throw new StartupError(`PATCHBAY_WEB_UI_DIR ${dir} is not a directory: point it at a GNS3 Web UI build`);
  if (!fs.statSync(path.join(root, "index.html"), { throwIfNoEntry: false })?.isFile()) {
    throw new StartupError(`PATCHBAY_WEB_UI_DIR ${dir} holds no index.html: point it at the directory of a GNS3 Web UI build (the one with index.html)`);
  }
  return root;
}

const inside = (root: string, p: string) => {
  const rel = path.relative(root, p);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
};

/** The file a name answers: a regular file inside the bundle, undefined for "not a file" (index.html), or "forbidden". */
async function resolveName(root: string, name: string): Promise<string | undefined | "forbidden"> {
  const segments = name.split("/");
  if (/[\\\u0000-\u001f\u007f]/.test(name) || segments.some((s) => s.startsWith("."))) return "forbidden";
  const candidate = path.join(root, ...segments.filter(Boolean));
  let real: string;
  try {
    real = await fs.promises.realpath(candidate);
  } catch {
    return undefined; // missing, a dangling link, a loop: not a file
  }
  if (!inside(root, real)) return real === root ? undefined : "forbidden";
  const stat = await fs.promises.stat(real).catch(() => undefined);
  return stat?.isFile() ? real : undefined;
}

function sendFile(res: Response, file: string, cacheControl: string): void {
  const type = /\.m?js$/i.test(file) ? "application/javascript; charset=utf-8" : undefined;
  if (type) res.type(type);
  else res.type(path.extname(file) || "application/octet-stream");
  res.set({ "Cache-Control": cacheControl, "X-Content-Type-Options": "nosniff" });
  res.sendFile(file, { dotfiles: "allow", cacheControl: false, etag: true, lastModified: true }, (error) => {
    if (error && !res.headersSent) res.status(404).type("text/plain").send("404: Not Found");
  });
}

/** Mounted at /static/web-ui: `root` is checkWebUiDir's answer. */
export function webUi(root: string): RequestHandler {
  const index = path.join(root, "index.html");
  return (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return void res.status(405).set("Allow", "GET, HEAD").type("text/plain").send("405: Method Not Allowed");
    }
    const raw = req.path.slice(1); // still percent-encoded
    if (raw === "") return void res.status(404).type("text/plain").send("404: Not Found");
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      return void res.status(400).type("text/plain").send("400: Bad Request");
    }
    resolveName(root, name).then((file) => {
      if (file === "forbidden") return void res.status(403).type("text/plain").send("403: Forbidden");
      if (file === undefined) return sendFile(res, index, REVALIDATE);
      sendFile(res, file, HASHED.test(path.posix.basename(name)) ? IMMUTABLE : REVALIDATE);
    }, next);
  };
}
