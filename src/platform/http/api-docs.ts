import { createRequire } from "node:module";
import path from "node:path";
import express, { type Express } from "express";
import { buildOpenApi, type ApiFace, type JsonSchema } from "./openapi.js";
import type { RouteEntry } from "./route-table.js";

/**
 * GET /openapi/<face>.json (one OpenAPI document per REST face, built on first request from the routes then
 * served) and GET /docs/api: Swagger UI over those documents, its assets served from the swagger-ui-dist
 * package (no CDN: works offline).
 */
const ASSETS = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const page = (faces: ApiFace[]) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Patchbay API reference</title>
<link rel="stylesheet" href="/docs/api/assets/swagger-ui.css">
<link rel="icon" href="/docs/api/assets/favicon-32x32.png">
</head>
<body>
<noscript>The API reference needs JavaScript; the documents themselves: ${faces.map((f) => `<a href="/openapi/${f.id}.json">${f.title}</a>`).join(", ")}.</noscript>
<div id="swagger-ui"></div>
<script src="/docs/api/assets/swagger-ui-bundle.js"></script>
<script src="/docs/api/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/api/init.js"></script>
</body>
</html>
`;

// validatorUrl null: the default badge calls validator.swagger.io.
const init = (faces: ApiFace[]) => `window.ui = SwaggerUIBundle({
  urls: ${JSON.stringify(faces.map((f) => ({ url: `/openapi/${f.id}.json`, name: `${f.title} (${f.prefix})` })))},
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
  validatorUrl: null,
  deepLinking: true,
  docExpansion: "none", // ~150 routes: groups start folded
});
`;

export function mountApiDocs(app: Express, faces: ApiFace[], routes: () => RouteEntry[], version: string): void {
  const documents = new Map<string, JsonSchema>();
  app.get("/openapi/:file", (req, res, next) => {
    const face = faces.find((f) => `${f.id}.json` === req.params.file);
    if (!face) return next();
    if (!documents.has(face.id)) documents.set(face.id, buildOpenApi(face, routes(), version));
    res.type("application/json").send(JSON.stringify(documents.get(face.id), null, 2));
  });
  app.get("/docs/api", (_req, res) => void res.type("html").send(page(faces)));
  app.get("/docs/api/init.js", (_req, res) => void res.type("text/javascript").send(init(faces)));
  app.use("/docs/api/assets", express.static(ASSETS, { index: false, maxAge: "1h" }));
}
