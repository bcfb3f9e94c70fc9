import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import type { Request, Response } from "express";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { computeTarget } from "../computes/client.js";
import { LOCAL_ID } from "../computes/model.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { computeImageList, storeImage, uploadImage } from "./operations.js";
import { IMAGE_DIRS, isImageEmulator, listImages, resolveImage, type ImageEmulator } from "./store.js";

const declaredSize = (req: Request) => (req.get("content-length") === undefined ? undefined : Number(req.get("content-length")));

/** `{emulator}` of the controller's routes: the image routes exist for qemu, dynamips and iou only (GNS3: 404). */
function emulatorOf(params: Record<string, string>, method: string, rest: string): ImageEmulator {
  if (!isImageEmulator(params.emulator)) throw new NotFoundError(`${method} /${params.emulator}/${rest} not found`);
  return params.emulator;
}

/**
 * GNS3's image routes (compat-qemu §1): the compute's own (`/v2/compute/{emulator}/images…`: list, raw upload →
 * 204, download) and the controller's (`/v2/computes/{compute_id}/{emulator}/images…`: list sorted by filename,
 * upload → 200 `{}`), which stream to the compute. Registered before the generic forwarder, which buffers.
 */
export function imageRoutes(routes: Gns3Routes, ctx: AppContext): void {
  for (const emulator of Object.keys(IMAGE_DIRS) as ImageEmulator[]) {
    const I = `/v2/compute/${emulator}/images`;
    routes.add("GET", I, async ({ res }) => sendJson(res, 200, await listImages(ctx, emulator)));
    routes.add(
      "POST",
      `${I}/{filename:.+}`,
      async ({ req, res, tail }) => {
        await storeImage(ctx, emulator, tail ?? "", req, declaredSize(req));
        res.status(204).end();
      },
      { raw: true },
    );
    routes.add("GET", `${I}/{filename:.+}`, async ({ res, tail }) => sendImage(res, await resolveImage(ctx, tail ?? "", emulator)));
  }

  const C = "/v2/computes/{compute_id}/{emulator}/images";
  routes.add("GET", C, async ({ res, params }) => sendJson(res, 200, await computeImageList(ctx, params.compute_id, emulatorOf(params, "GET", "images"))));
  routes.add(
    "POST",
    `${C}/{filename:.+}`,
    async ({ req, res, params, tail }) => {
      const emulator = emulatorOf(params, "POST", `images/${tail}`);
      await uploadImage(ctx, params.compute_id, emulator, tail ?? "", req, declaredSize(req));
      sendJson(res, 200, {});
    },
    { raw: true },
  );
  // Upstream's controller cannot relay a download (it JSON-decodes the body: 409 "… is not a GNS3 server"); here the
  // local compute's image is streamed, and a remote compute's is fetched from that compute's own route.
  routes.add("GET", `${C}/{filename:.+}`, async ({ res, params, tail }) => {
    const emulator = emulatorOf(params, "GET", `images/${tail}`);
    if (params.compute_id !== LOCAL_ID) {
      await computeTarget(ctx, params.compute_id); // 404 for an unknown compute
      throw new ConflictError(`Download the image from its compute: GET /v2/compute/${emulator}/images/${tail} on compute ${params.compute_id}`);
    }
    await sendImage(res, await resolveImage(ctx, tail ?? "", emulator));
  });
}

async function sendImage(res: Response, file: string): Promise<void> {
  res.status(200).type("application/octet-stream");
  await pipeline(createReadStream(file), res);
}
