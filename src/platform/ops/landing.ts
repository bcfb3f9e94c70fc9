import type { RequestHandler } from "express";
import type { Config } from "../config.js";

/**
 * GET / and GET /start: what this server is, its version and where to go — plain HTML, no script, no external
 * asset. (gns3-server also answers / with an HTML page; GNS3 clients never read it.) A compute serves only the
 * compute API, so its page links only what it serves. With a Web UI (`webUi`: its entry page), / redirects there
 * (server.ts) and this page, at /start, links to it.
 */
const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

export function landingPage(config: Pick<Config, "mode">, version: string, webUi?: string): RequestHandler {
  const compute = config.mode === "compute";
  const link = (href: string, text: string, what: string) => `<li><a href="${href}">${escape(text)}</a> — ${escape(what)}</li>`;
  const links = [
    ...(compute
      ? [link("/v2/compute/capabilities", "/v2/compute", "the compute API its controller drives (everything else answers 403 here)")]
      : [
          ...(webUi ? [link(webUi, "GNS3 Web UI", "the GNS3 Web UI build this server serves (PATCHBAY_WEB_UI_DIR); / opens it too")] : []),
          link("/lab", "Lab", "the live lab page: projects, topologies, node consoles, link packets and quota rules as they change"),
          link("/graphql", "GraphiQL", "the GraphQL API: queries, mutations, subscriptions (graphql-ws and SSE) at /graphql"),
          link("/docs/api", "API reference", "the REST faces, browsable"),
          link("/openapi/gns3.json", "/openapi/gns3.json", "OpenAPI document of the GNS3 v2 face (/v2)"),
          link("/openapi/ontap.json", "/openapi/ontap.json", "OpenAPI document of the ONTAP face (/api)"),
        ]),
    link("/health", "/health", "liveness"),
    link("/health/ready", "/health/ready", "readiness: database, migrations, Redis, data directory"),
    link("/metrics", "/metrics", "Prometheus metrics"),
  ];
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Patchbay ${escape(version)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}</style>
</head>
<body>
<h1>Patchbay</h1>
<p>Version <strong id="version">${escape(version)}</strong>${compute ? " — <strong>compute mode</strong>" : ""}.</p>
<p>${
    compute
      ? "A compute of a Patchbay controller: it runs the nodes its controller places here."
      : "One server for network emulation control (wire-compatible with the GNS3 server v2 API, under <code>/v2</code>) and storage quota rules (wire-compatible with the ONTAP REST API, under <code>/api</code>), with a GraphQL API over both."
  }</p>
<ul>
${links.join("\n")}
</ul>
</body>
</html>
`;
  return (_req, res) => void res.type("html").send(html);
}
