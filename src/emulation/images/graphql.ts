import { Readable } from "node:stream";
import { builder } from "../../platform/graphql/builder.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { computeIdArg } from "../computes/graphql.js";
import { FORWARDED_ERRORS } from "../computes/forwarding.js";
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
  values: {
    QEMU: { value: "qemu", description: "Disk, CD-ROM, kernel and BIOS images of QEMU VMs" },
    DYNAMIPS: { value: "dynamips", description: "Cisco IOS images for Dynamips routers" },
    IOU: { value: "iou", description: "Cisco IOS on UNIX binaries" },
  } as const,
});

/** An image as listed, with where it is (for its download URL). */
type ListedImage = ImageEntry & { computeId: string; emulator: ImageEmulator };

const EmulatorImageRef = builder.objectRef<ListedImage>("EmulatorImage").implement({
  description: "An image file of a compute's image store: a disk or OS image nodes boot from",
  fields: (t) => ({
    filename: t.exposeString("filename", { description: "The file's name" }),
    path: t.exposeString("path", { description: "The name node properties use (relative to the emulator's image directory)" }),
    md5sum: t.exposeString("md5sum", { description: "The MD5 checksum of the file (to check a copy, or an appliance's expected image)" }),
    filesizeBytes: t.field({ type: "BigInt", description: "The file's size, in bytes", resolve: (i) => BigInt(i.filesize) }),
    downloadUrl: t.field({
      type: DownloadUrlRef,
      description: "A short-lived URL to download the image file (the local compute's images only)",
      args: { validForSeconds: validForArg(t.arg) },
      resolve: (i, args, ctx) => downloadUrl(ctx, `/v2/computes/${encodeURIComponent(i.computeId)}/${i.emulator}/images/${encodeFilePath(i.path)}`, args.validForSeconds),
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
      description: "The images of a compute for one emulator, sorted by filename",
      errors: { types: FORWARDED_ERRORS },
      args: {
        computeId: t.arg.id({ required: true, defaultValue: "local", description: "The compute whose image store to list (its global id, or its GNS3 compute_id)" }),
        type: t.arg({ type: ImageTypeEnum, required: true, description: "The emulator whose images to list" }),
      },
      resolve: async (_r, args, ctx) => {
        const emulator = args.type as ImageEmulator;
        const computeId = computeIdArg(args.computeId);
        return arrayPage(args, (await computeImageList(ctx, computeId, emulator)).map((i) => ({ ...i, computeId, emulator })));
      },
    },
    arrayConnectionOptions,
  ),
);

const UploadImageInput = builder.inputType("UploadImageInput", {
  description: "An image file for a compute's image store, and its name there",
  fields: (t) => ({
    computeId: t.id({ required: true, defaultValue: "local", description: "The compute to store the image on (its global id, or its GNS3 compute_id)" }),
    type: t.field({ type: ImageTypeEnum, required: true, description: "The emulator the image is for" }),
    filename: t.string({ required: true, description: "The image's name, relative to the emulator's image directory" }),
    file: t.field({ type: "File", required: true, description: "The image, sent as a multipart upload (its variable mapped to `input.file`)" }),
  }),
});

builder.mutationField("uploadImage", (t) =>
  t.field({
    type: payloadType<{ image: ListedImage | null }>("uploadImage", "What `uploadImage` stored: the image", (f) => ({
      image: f.field({ type: EmulatorImageRef, nullable: true, description: "The image as the compute lists it (null if a remote compute does not list it back)", resolve: (p) => p.image }),
    })),
    description: "Stores an image in a compute's image store under `filename`, for nodes to boot from; an existing image of that name is replaced",
    // A remote compute stores the image: its refusals are mapped as a forwarded request's.
    errors: mutationErrors("uploadImage", FORWARDED_ERRORS),
    args: { input: t.arg({ type: UploadImageInput, required: true, description: "The compute, the image's name and its file" }) },
    resolve: async (_r, { input }, ctx) => {
      const computeId = computeIdArg(input.computeId);
      const emulator = input.type as ImageEmulator;
      const body = Readable.from(chunks(input.file.stream()));
      const stored = (await uploadImage(ctx, computeId, emulator, input.filename, body, input.file.size)) ?? (await computeImageList(ctx, computeId, emulator)).find((i) => i.path === input.filename);
      return { image: stored ? { ...stored, computeId, emulator } : null };
    },
  }),
);
