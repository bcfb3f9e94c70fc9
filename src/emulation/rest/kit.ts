import type { NextFunction, Request, RequestHandler, Response, Router } from "express";
import express from "express";
import { z } from "zod";
import { DomainError, InvalidInputError } from "../../platform/core/errors.js";
import { httpClientError } from "../../platform/http/client-errors.js";
import { jsonSchemaOf, type RouteDoc } from "../../platform/http/openapi.js";
import { logUnexpected } from "../../platform/http/request-id.js";
import { isForbiddenKey, parseJson, UnsafeJsonError } from "../../platform/http/safe-json.js";
import { gns3Body, pythonRepr } from "./json.js";

/**
 * The GNS3 v2 REST conventions in one place, so route modules only translate: bodies parsed as JSON with the
 * query string merged in (GNS3 validates both together), schema errors worded like jsonschema, errors as
 * {"message","status"} (+ path/request/method on 400s), responses with sorted keys, X-Route, and plain-text
 * 404/405 for unknown routes and methods.
 */
export const SERVER_HEADER = "Python/3.11 GNS3/2.2.59 (Patchbay)";

export interface Gns3Request<B = any> {
  req: Request;
  res: Response;
  params: Record<string, string>;
  /** Parsed JSON with the query string merged in (validated when the route has a schema). */
  body: B;
  /** Raw query parameters (first value of each). */
  query: Record<string, string>;
  /** For `{path:.+}` routes: the rest of the path exactly as sent, percent-decoded once. */
  tail?: string;
}

export interface RouteOptions {
  /** Zod schema for body + query (GNS3 merges them before validation). */
  schema?: z.ZodType;
  /** Raw routes (uploads, imports, forwarders) get the unparsed request and skip validation. */
  raw?: boolean;
}

type Handler = (r: Gns3Request) => Promise<void> | void;

export class BadRequest extends InvalidInputError {
  constructor(
    message: string,
    readonly request: unknown,
  ) {
    super(message);
  }
}

/** `/v2/projects/{project_id}/files/{path:.+}` → express path + the name of the tail parameter. */
function toExpressPath(pattern: string): { path: string; tail?: string } {
  const tail = /\{(\w+):\.\+\}$/.exec(pattern)?.[1];
  const path = pattern.replace(/\{(\w+):\.\+\}$/, "*$1").replace(/\{(\w+)\}/g, ":$1");
  return { path, tail };
}

/**
 * The GNS3 GUI parses a body only when Content-Type is exactly "application/json" (string equality). Express
 * appends "; charset=utf-8" both in res.set/res.type and when send() gets a string: hence setHeader and a Buffer.
 */
export const JSON_CONTENT_TYPE = "application/json";

export function sendJson(res: Response, status: number, body: unknown): void {
  sendJsonBytes(res, status, gns3Bytes(body));
}

/** The body as GNS3 sends it (sorted keys, 4-space indentation), encoded once: the read views keep these bytes. */
export const gns3Bytes = (body: unknown) => Buffer.from(gns3Body(body));

/** With `etag` (a read view's, platform/read-views.ts `viewTag`), Express sends it instead of hashing the bytes. */
export function sendJsonBytes(res: Response, status: number, bytes: Buffer, etag?: string): void {
  res.status(status).setHeader("Content-Type", JSON_CONTENT_TYPE);
  if (etag) res.setHeader("ETag", etag);
  res.send(bytes);
}

export function sendError(res: Response, err: unknown, req: Request, route?: string): void {
  if (err instanceof DomainError) {
    const body: Record<string, unknown> = { message: err.message, status: err.status };
    if (err.status === 400) Object.assign(body, { path: route ?? req.path, method: req.method, request: err instanceof BadRequest ? err.request : {} });
    return sendJson(res, err.status, body);
  }
  const e = err as { type?: string; status?: number };
  if (e?.type === "entity.too.large") return sendJson(res, 413, { message: "Request body too large", status: 413 });
  const client = httpClientError(err);
  if (client) return sendJson(res, client.status, { message: client.message, status: client.status });
  logUnexpected(req, res, err);
  sendJson(res, 500, { message: "Internal server error", status: 500 });
}

const jsonSchemaMessage = (issue: z.core.$ZodIssue, data: unknown): string => {
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => `'${k}'`).join(", ");
    return `Additional properties are not allowed (${keys} ${issue.keys.length > 1 ? "were" : "was"} unexpected)`;
  }
  const at = issue.path.reduce<unknown>((o, k) => (o as Record<PropertyKey, unknown>)?.[k as PropertyKey], data);
  if (issue.code === "invalid_type" && at === undefined) return `'${String(issue.path.at(-1))}' is a required property`;
  if (issue.code === "invalid_type") return `${pythonRepr(at)} is not of type '${jsonType(issue.expected)}'`;
  if (issue.code === "invalid_value") return `${pythonRepr(at)} is not one of ${pythonRepr(issue.values)}`;
  if (issue.code === "too_small" && typeof at === "string") return `${pythonRepr(at)} is too short`;
  if (issue.code === "too_small") return `${pythonRepr(at)} is less than the minimum of ${issue.minimum}`;
  if (issue.code === "too_big") return `${pythonRepr(at)} is greater than the maximum of ${issue.maximum}`;
  if (issue.code === "invalid_format") return `${pythonRepr(at)} does not match '${issue.pattern ?? issue.format}'`;
  return issue.message;
};

const jsonType = (t: string) => ({ number: "number", int: "integer", string: "string", boolean: "boolean", object: "object", array: "array" })[t] ?? t;

export function validate<T>(schema: z.ZodType<T>, data: unknown, req: Request): T {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new BadRequest(
    `JSON schema error with API request '${req.originalUrl}' and JSON data '${pythonRepr(data)}': ${jsonSchemaMessage(issue, data)}`,
    data,
  );
}

function firstValues(query: Request["query"]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    if (isForbiddenKey(k)) throw new BadRequest(`Forbidden query parameter '${k}'`, {});
    out[k] = String(Array.isArray(v) ? v[0] : v);
  }
  return out;
}

/** The body as JSON: prototype keys and deep nesting refused (see platform/http/safe-json). */
function parseBody(text: string): unknown {
  try {
    return parseJson(text);
  } catch (e) {
    if (e instanceof UnsafeJsonError) throw new BadRequest(e.message, {});
    throw new BadRequest(`Invalid JSON ${(e as Error).message}`, { malformed_json: text });
  }
}

/** Collects routes; `install` mounts them plus the 405 answers for paths whose method is unknown. */
export class Gns3Routes {
  private routes: { method: string; pattern: string; handler: Handler; options: RouteOptions }[] = [];

  constructor(private readonly bodyLimit: string) {}

  add(method: string, pattern: string, handler: Handler, options: RouteOptions = {}): this {
    this.routes.push({ method, pattern, handler, options });
    return this;
  }

  /** The routes for the OpenAPI document: express path, the schema bodies are validated with, raw uploads. */
  describe(): RouteDoc[] {
    return this.routes.map(({ method, pattern, options }) => ({
      method,
      path: toExpressPath(pattern).path,
      body: options.schema ? jsonSchemaOf(options.schema) : undefined,
      upload: options.raw && method !== "GET" ? true : undefined,
    }));
  }

  install(router: Router): void {
    const json = express.raw({ type: () => true, limit: this.bodyLimit });
    const methodsByPath = new Map<string, string[]>();
    for (const { method, pattern, handler, options } of this.routes) {
      const { path, tail } = toExpressPath(pattern);
      methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method]);
      const steps: RequestHandler[] = options.raw ? [] : [json];
      steps.push(async (req: Request, res: Response, _next: NextFunction) => {
        res.set({ "X-Route": pattern, Server: SERVER_HEADER });
        try {
          const query = firstValues(req.query);
          let body: unknown = undefined;
          if (!options.raw) {
            const text = Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "";
            const parsed: unknown = text.trim() ? parseBody(text) : {};
            body = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? { ...parsed, ...query } : parsed;
            if (options.schema) body = validate(options.schema, body, req);
          }
          const params = Object.fromEntries(Object.entries(req.params).filter(([k]) => k !== tail)) as Record<string, string>;
          await handler({ req, res, params, body, query, tail: tail ? rawTail(req, path) : undefined });
        } catch (err) {
          if (!res.headersSent) sendError(res, err, req, pattern);
          else res.destroy();
        }
      });
      (router as unknown as Record<string, (p: string, ...h: RequestHandler[]) => void>)[method.toLowerCase()](path, ...steps);
    }
    for (const [path, methods] of methodsByPath) {
      router.all(path, (_req, res) => {
        res.status(405).set("Allow", [...methods, "OPTIONS"].join(",")).type("text/plain").send("405: Method Not Allowed");
      });
    }
    // Errors raised before a handler runs (a path parameter that is not valid percent-encoding).
    router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => sendError(res, err, req));
  }
}

/** The tail of the path as sent (before express decodes and splits it), decoded once. */
function rawTail(req: Request, expressPath: string): string {
  const fixedSegments = expressPath.split("/").length - 1;
  const rawPath = req.originalUrl.split("?")[0];
  const tail = rawPath.split("/").slice(fixedSegments).join("/");
  try {
    return decodeURIComponent(tail);
  } catch {
    return tail;
  }
}

/** A raw body (uploads, imports), held to a size limit: 413 beyond it. */
export function readRawBody(req: Request, res: Response, limit: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    express.raw({ type: () => true, limit })(req, res, (err?: unknown) =>
      err ? reject(err) : resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)),
    ),
  );
}
