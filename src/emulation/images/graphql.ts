import { Readable } from "node:stream";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import "../../platform/graphql/upload.js"; // the File scalar
import { DownloadUrlRef, downloadUrl, encodeFilePath, validForArg } from "../files/graphql.js";
import { computeImageList, uploadImage } from "./operations.js";
import type { ImageEmulator, ImageEntry } from "./store.js";

/**
 * Images over GraphQL, with the operations of the controller's REST routes (`/v2/computes/{id}/{emulator}/images…`):
 * the list of a compute's images, and an upload (a multipart `File`) stored on that compute.
 */
const ImageTypeEnum = builder.enumType("ImageType", {
  description: "The emulator an image is for (its directory of the image store)",
  values: { QEMU: { value: "qemu" }, DYNAMIPS: { value: "dynamips" }, IOU: { value: "iou" } } as const,
});

/** An image as listed, with where it is (for its download URL). */
type ListedImage = ImageEntry & { computeId: string; emulator: ImageEmulator };

const EmulatorImageRef = builder.objectRef<ListedImage>("EmulatorImage").implement({
  description: "An image file of a compute's image store (GNS3: filename, path, md5sum, filesize)",
  fields: (t) => ({
    filename: t.exposeString("filename"),
    path: t.exposeString("path", { description: "The name node properties use (relative to the emulator's image directory)" }),
    md5sum: t.exposeString("md5sum"),
    filesize: t.field({ type: "BigInt", resolve: (i) => BigInt(i.filesize) }),
    downloadUrl: t.field({
      type: DownloadUrlRef,
      description: "Downloads the image (GET /v2/computes/{compute_id}/{emulator}/images/{filename}; the local compute's only)",
      args: { validFor: validForArg(t.arg) },
      resolve: (i, args, ctx) => downloadUrl(ctx, `/v2/computes/${encodeURIComponent(i.computeId)}/${i.emulator}/images/${encodeFilePath(i.path)}`, args.validFor),
    }),
  }),
});

/** The file's bytes as they come: Yoga's File is its fetch ponyfill's, whose stream Readable.fromWeb refuses. */
async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
  } finally {
    reader.releaseLock();
  }
}

builder.queryField("images", (t) =>
  t.connection(
    {
      type: EmulatorImageRef,
      description: "The images of a compute, sorted by filename (GET /v2/computes/{compute_id}/{emulator}/images)",
      errors: { types: DOMAIN_ERRORS },
      args: { computeId: t.arg.id({ required: true, defaultValue: "local" }), type: t.arg({ type: ImageTypeEnum, required: true }) },
      resolve: async (_r, args, ctx) => {
        const emulator = args.type as ImageEmulator;
        return arrayPage(args, (await computeImageList(ctx, args.computeId, emulator)).map((i) => ({ ...i, computeId: args.computeId, emulator })));
      },
    },
    arrayConnectionOptions,
  ),
);

builder.mutationField("uploadImage", (t) =>
  t.field({
    type: "Boolean",
    description:
      "Stores an image on a compute under `filename` (a name relative to the image directory; POST /v2/computes/{compute_id}/{emulator}/images/{filename}); an existing image of that name is replaced",
    errors: { types: DOMAIN_ERRORS },
    args: {
      computeId: t.arg.id({ required: true, defaultValue: "local" }),
      type: t.arg({ type: ImageTypeEnum, required: true }),
      filename: t.arg.string({ required: true }),
      file: t.arg({ type: "File", required: true }),
    },
    resolve: async (_r, args, ctx) => {
      const body = Readable.from(chunks(args.file.stream()));
      await uploadImage(ctx, args.computeId, args.type as ImageEmulator, args.filename, body, args.file.size);
      return true;
    },
  }),
);
