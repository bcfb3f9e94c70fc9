import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, InvalidInputError, NotFoundError, UnavailableError } from "../../platform/core/errors.js";
import { LOCAL_ID } from "./model.js";
import { unseal } from "./secret.js";

/**
 * HTTP to a compute's API (`/v2/compute/...`) with its Basic credentials, for placement and forwarding. node:http
 * rather than fetch, as in the monitor: fetch refuses "bad ports" a compute may listen on. The built-in local
 * compute is this server itself, reached over its own listener like GNS3 does.
 */
export interface ComputeTarget {
  computeId: string;
  name: string;
  protocol: string;
  host: string;
  port: number;
  user: string | null;
  password: string | null;
}

export interface ComputeAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** This server's address on the connection: where the compute can reach us (rhost of NIOs). */
  localAddress: string;
}

const DEFAULT_TIMEOUT_MS = 15_000;

export async function computeTarget(ctx: AppContext, computeId: string): Promise<ComputeTarget> {
  if (computeId === LOCAL_ID) {
    const { host, port, tls, auth } = ctx.config;
    const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
    return { computeId, name: "local", protocol: tls ? "https" : "http", host: reachable, port, user: auth?.user ?? null, password: auth?.password ?? null };
  }
  const row = await ctx.db.compute.findUnique({ where: { id: computeId } });
  if (!row) throw new NotFoundError(`Compute ID ${computeId} doesn't exist`);
  const password = row.passwordSeal ? unseal(ctx.config.dataDir, row.passwordSeal, row.id) : null;
  return { computeId, name: row.name, protocol: row.protocol, host: row.host, port: row.port, user: row.user, password };
}

export const computeUrl = (t: ComputeTarget, route: string) => `${t.protocol}://${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}${route}`;

/**
 * One request; network failures and timeouts become 504 (UnavailableError), any HTTP answer is returned as is. A
 * Readable body is streamed (image uploads passed on by the controller), the timeout then counting idle time.
 */
export function computeRequest(
  t: ComputeTarget,
  method: string,
  route: string,
  body?: Buffer | object | Readable,
  opts: { timeoutMs?: number; contentType?: string } = {},
): Promise<ComputeAnswer> {
  const stream = body instanceof Readable ? body : undefined;
  const payload = body === undefined || stream ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { accept: "application/json" };
  if (payload || stream) headers["content-type"] = opts.contentType ?? "application/json";
  if (t.user) headers.authorization = `Basic ${Buffer.from(`${t.user}:${t.password ?? ""}`).toString("base64")}`;
  const request = t.protocol === "https" ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const fail = (e: Error) =>
      reject(new UnavailableError(`Cannot connect to compute '${t.name}' with request ${method} ${computeUrl(t, route)}: ${e.message}`));
    let req: http.ClientRequest;
    try {
      req = request({ host: t.host, port: t.port, path: route, method, headers, timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS }, onResponse);
    } catch (e) {
      // node:http refuses what cannot go on the wire (e.g. control characters in the path) before sending anything.
      return reject(new InvalidInputError(`Cannot send ${method} ${route}: ${(e as Error).message}`));
    }
    function onResponse(res: http.IncomingMessage) {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", fail);
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), localAddress: req.socket?.localAddress ?? "127.0.0.1" }),
      );
    }
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", fail);
    if (!stream) return void req.end(payload);
    stream.on("error", (e) => req.destroy(e));
    stream.pipe(req);
  });
}

function parsed(answer: ComputeAnswer): any {
  try {
    return answer.body.length ? JSON.parse(answer.body.toString("utf8")) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A JSON call for placement. A compute's 404 stays a 404 (callers use it to re-create what a restarted compute
 * forgot); any other refusal becomes a 409 with the compute's message, as GNS3's controller re-raises them.
 */
export async function computeJson<T = any>(
  t: ComputeTarget,
  method: string,
  route: string,
  body?: object,
  timeoutMs?: number,
): Promise<T & { localAddress: string }> {
  const answer = await computeRequest(t, method, route, body, { timeoutMs });
  const json = parsed(answer);
  if (answer.status >= 200 && answer.status < 300) {
    const out = (json && typeof json === "object" ? json : {}) as T & { localAddress: string };
    Object.defineProperty(out, "localAddress", { value: answer.localAddress, enumerable: false });
    return out;
  }
  const message = typeof json?.message === "string" ? json.message : `${method} ${route} answered ${answer.status}`;
  if (answer.status === 404) throw new NotFoundError(message);
  throw new ConflictError(`Compute '${t.name}': ${message}`);
}
