import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, UnavailableError, UpstreamError } from "../../platform/core/errors.js";
import { computeRequest, computeTarget, computeUrl } from "./client.js";

/**
 * `/v2/computes/{compute_id}/{emulator}/{action...}` (compat §8.2): the controller passes a request through to
 * `/v2/compute/{emulator}/{action}` on that compute and maps its errors back the way GNS3's controller does.
 * Unreachable or silent computes are 504 (the client's UnavailableError).
 */
export async function forwardToCompute(
  ctx: AppContext,
  computeId: string,
  method: string,
  emulator: string,
  action: string,
  body?: Buffer,
  contentType?: string,
): Promise<unknown> {
  const target = await computeTarget(ctx, computeId);
  const segments = [emulator, ...action.split("/")];
  // A dot segment would leave /v2/compute/ on a compute whose server resolves them (with this controller's
  // credentials for it): no compute route has one, so it is answered here as the compute would answer it.
  if (segments.some((s) => s === "." || s === "..")) throw new NotFoundError(`${method} /${emulator}/${action} not found`);
  // The segments arrive decoded: encode them again, so a NUL, space or "?" stays part of the segment it came in.
  const route = `/v2/compute/${segments.map(encodeURIComponent).join("/")}`;
  const answer = await computeRequest(target, method, route, body && body.length ? body : undefined, { contentType });
  const text = answer.body.toString("utf8");
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (answer.status >= 200 && answer.status < 300) return json ?? null;
  const message = typeof json?.message === "string" ? json.message : text;
  switch (answer.status) {
    case 400:
      throw new InvalidInputError(`Bad request ${computeUrl(target, route)} ${text}`);
    case 403:
      throw new ForbiddenError(message);
    case 404:
      throw new NotFoundError(`${method} /${emulator}/${action} not found`);
    case 409:
      throw new ConflictError(message);
    default:
      if (answer.status >= 500) throw new UpstreamError(`Internal server error ${computeUrl(target, route)}`);
      throw new ConflictError(`${method} ${computeUrl(target, route)} answered ${answer.status}: ${message}`);
  }
}

/**
 * What a request passed through to a compute can fail with: an id that names no compute, the compute's own
 * 400/403/404/409/5xx as GNS3's controller maps them (above), UnavailableError when it does not answer. The typed
 * errors of the GraphQL fields whose work a compute does (a compute's images, its docker images, a node's console;
 * forwardToCompute, uploadImage, the node lifecycle), each allow-listed in the schema lint's EVERY_ERROR.
 */
export const FORWARDED_ERRORS = [InvalidInputError, NotFoundError, ConflictError, ForbiddenError, UnavailableError, UpstreamError];

/** The image list of a compute, in GNS3's order: by filename for qemu/dynamips/iou, by image otherwise. */
export async function computeImages(ctx: AppContext, computeId: string, emulator: string): Promise<unknown> {
  const list = await forwardToCompute(ctx, computeId, "GET", emulator, "images");
  if (!Array.isArray(list)) return list;
  const key = ["qemu", "dynamips", "iou"].includes(emulator) ? "filename" : "image";
  return [...list].sort((a, b) => String(a?.[key] ?? "").localeCompare(String(b?.[key] ?? "")));
}
