import express, { type Request, type Response } from "express";
import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { defaultSymbols, listSymbols, readSymbol, symbolDimensions, SYMBOL_MAX_BYTES, uploadSymbol } from "./operations.js";

const CONTENT_TYPES: Record<string, string> = {
  svg: "image/svg+xml",
  png: "image/png",
  gif: "image/gif",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
};

/** Reads a raw upload with the symbol size limit; an oversized body becomes the kit's 413. */
const readBody = (req: Request, res: Response) =>
  new Promise<Buffer>((resolve, reject) =>
    express.raw({ type: () => true, limit: SYMBOL_MAX_BYTES })(req, res, (err?: unknown) =>
      err ? reject(err) : resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)),
    ),
  );

/**
 * GNS3's `/v2/symbols/{symbol_id:.+}/raw` and `/dimensions`: the id may hold slashes and colons, encoded or not,
 * so one route takes the whole tail and the suffix picks the action.
 */
export function symbolRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("GET", "/v2/symbols", ({ res }) => sendJson(res, 200, listSymbols(ctx)));
  routes.add("GET", "/v2/default_symbols", ({ res }) => sendJson(res, 200, defaultSymbols()));

  const split = (tail: string) => /^(.*)\/(raw|dimensions)$/s.exec(tail) ?? undefined;
  const notFound = (res: Response) => {
    res.removeHeader("X-Route"); // as for any unknown route
    res.status(404).type("text/plain").send("404: Not Found");
  };

  routes.add(
    "GET",
    "/v2/symbols/{symbol_id:.+}",
    async ({ res, tail }) => {
      const [, id, action] = split(tail ?? "") ?? [];
      if (!action) return notFound(res);
      res.set("X-Route", `/v2/symbols/{symbol_id:.+}/${action}`);
      if (action === "dimensions") return sendJson(res, 200, await symbolDimensions(ctx, id));
      const symbol = await readSymbol(ctx, id);
      const ext = symbol.filename.split(".").pop()?.toLowerCase() ?? "";
      res
        .status(200)
        .set({ "Content-Type": CONTENT_TYPES[ext] ?? "application/octet-stream", "Last-Modified": symbol.modified.toUTCString() })
        .send(symbol.data);
    },
    { raw: true },
  );
  routes.add(
    "POST",
    "/v2/symbols/{symbol_id:.+}",
    async ({ req, res, tail }) => {
      const [, id, action] = split(tail ?? "") ?? [];
      if (action !== "raw") return notFound(res);
      res.set("X-Route", "/v2/symbols/{symbol_id:.+}/raw");
      await uploadSymbol(ctx, id, await readBody(req, res));
      res.status(204).end();
    },
    { raw: true },
  );
}
