import type { Readable } from "node:stream";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, PayloadTooLargeError, UpstreamError } from "../../platform/core/errors.js";
import { computeRequest, computeTarget } from "../computes/client.js";
import { LOCAL_ID } from "../computes/model.js";
import { computeImages } from "../computes/forwarding.js";
import { listImages, saveImage, uploadLimitBytes, type ImageEmulator, type ImageEntry } from "./store.js";

/**
 * Images on a compute, as the controller reaches them (`/v2/computes/{id}/{emulator}/images…`, GraphQL): the local
 * compute's store directly, a remote compute through its compute API. Uploads stream through; nothing is held in
 * memory or stored on the controller.
 */

export async function computeImageList(ctx: AppContext, computeId: string, emulator: ImageEmulator): Promise<ImageEntry[]> {
  if (computeId === LOCAL_ID) return listImages(ctx, emulator);
  return (await computeImages(ctx, computeId, emulator)) as ImageEntry[];
}

/** Refuses a declared size beyond the limit before anything is read or sent. */
function checkDeclaredSize(ctx: AppContext, name: string, size: number | undefined): void {
  const limit = uploadLimitBytes(ctx);
  if (size !== undefined && size > limit) throw new PayloadTooLargeError(`Image ${name} is larger than the upload limit (${limit} bytes)`);
}

/** Stores an image on this host's store (the compute route, and the controller's for the local compute). */
export async function storeImage(ctx: AppContext, emulator: ImageEmulator, name: string, body: Readable, size?: number): Promise<ImageEntry> {
  checkDeclaredSize(ctx, name, size);
  return saveImage(ctx, emulator, name, body, uploadLimitBytes(ctx));
}

/** Stores an image on a compute; the stored image when the store is this host's (a remote compute answers none). */
export async function uploadImage(ctx: AppContext, computeId: string, emulator: ImageEmulator, name: string, body: Readable, size?: number): Promise<ImageEntry | undefined> {
  if (computeId === LOCAL_ID) return storeImage(ctx, emulator, name, body, size);
  checkDeclaredSize(ctx, name, size);
  const target = await computeTarget(ctx, computeId);
  const route = `/v2/compute/${emulator}/images/${name.split("/").map(encodeURIComponent).join("/")}`;
  const answer = await computeRequest(target, "POST", route, body, { contentType: "application/octet-stream" });
  if (answer.status >= 200 && answer.status < 300) return undefined;
  let message = answer.body.toString("utf8");
  try {
    message = JSON.parse(message).message ?? message;
  } catch {
    // not JSON: the text is the message
  }
  const errors: Record<number, new (m: string) => Error> = { 400: InvalidInputError, 403: ForbiddenError, 404: NotFoundError, 413: PayloadTooLargeError };
  if (errors[answer.status]) throw new errors[answer.status](message);
  if (answer.status >= 500) throw new UpstreamError(`Compute '${target.name}' failed to store image ${name}`);
  throw new ConflictError(message);
}
