import { z } from "zod";
import type { RouteEntry } from "./route-table.js";

/**
 * OpenAPI 3.1 documents of the REST faces, generated at run time: the operations are the routes the server
 * really serves (its route table), and request bodies come from the schemas the routes validate with (zod,
 * converted by zod's own JSON Schema generator), so the documents cannot drift from the code.
 */
export type JsonSchema = Record<string, unknown>;

/** What a face knows about one of its routes beyond method and path. */
export interface RouteDoc {
  method: string;
  /** Express path syntax, as in the route table. */
  path: string;
  /** The JSON request body. */
  body?: JsonSchema;
  /** A raw upload (project import, files, symbols). */
  upload?: boolean;
  query?: { name: string; description: string; schema?: JsonSchema }[];
}

/** A REST face: the routes under `prefix` and how to describe them. */
export interface ApiFace {
  id: string;
  title: string;
  description: string;
  prefix: string;
  /** Path segments after the prefix that name an operation's group (tag). */
  tagDepth: number;
  errorSchema: JsonSchema;
  routes(): RouteDoc[];
}

/** A zod schema as the JSON Schema of what a client sends. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  return rest;
}

/** `/v2/projects/:project_id/files/*path` → `/v2/projects/{project_id}/files/{path}` and its parameter names. */
export function openApiPath(expressPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = expressPath.replace(/[:*](\w+)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

const statusText: Record<string, string> = { get: "read", post: "create or act", put: "replace or change", patch: "change", delete: "delete" };

export function buildOpenApi(face: ApiFace, served: RouteEntry[], version: string): JsonSchema {
  const docs = new Map(face.routes().map((d) => [`${d.method} ${d.path}`, d]));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of served) {
    if (route.path !== face.prefix && !route.path.startsWith(`${face.prefix}/`)) continue;
    const doc = docs.get(`${route.method} ${route.path}`);
    const { path, params } = openApiPath(route.path);
    const method = route.method.toLowerCase();
    if (method === "head" || method === "options") continue;
    const segments = path.slice(face.prefix.length).split("/").filter(Boolean);
    const tag = segments.slice(0, face.tagDepth).filter((s) => !s.startsWith("{")).join("/") || "server";
    const operation: Record<string, unknown> = {
      operationId: `${method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`,
      summary: `${route.method} ${path}`,
      description: `${statusText[method] ?? method} (${face.title})`,
      tags: [tag],
      parameters: [
        ...params.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
        ...(doc?.query ?? []).map((q) => ({ name: q.name, in: "query", required: false, description: q.description, schema: q.schema ?? { type: "string" } })),
      ],
      responses: {
        "2XX": { description: "Success" },
        default: { description: "Error", content: { "application/json": { schema: face.errorSchema } } },
      },
    };
    if (doc?.body) operation.requestBody = { required: false, content: { "application/json": { schema: doc.body } } };
    if (doc?.upload) operation.requestBody = { required: false, content: { "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } };
    (paths[path] ??= {})[method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: { title: face.title, version, description: face.description },
    servers: [{ url: "/" }],
    components: { securitySchemes: { basicAuth: { type: "http", scheme: "basic" } } },
    // Credentials are needed only when the server is started with PATCHBAY_AUTH_USER/PASSWORD.
    security: [{}, { basicAuth: [] }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
  };
}
