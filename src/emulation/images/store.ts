import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError } from "../../platform/core/errors.js";
import { writeBodyToFile } from "../../platform/http/body-to-file.js";
import { KeyedQueue } from "../../platform/keyed-queue.js";
import { writeFileAtomic } from "../files/atomic.js";
import { isStrictlyInside, resolveInside } from "../files/safe-path.js";
import { isImageName } from "./names.js";
import { checkImageReferences } from "./references.js";

/**
 * The image store: `<data dir>/images/<QEMU|IOS|IOU>` (GNS3's layout), the one place image files are resolved,
 * listed and written. Names come from clients (node properties, upload URLs), so every one is checked
 * (`names.ts`) and resolved with containment proven after symlinks (`files/safe-path.ts`). Each image's md5 is
 * cached in a `<file>.md5sum` sidecar, as GNS3 does, computed while an upload streams in.
 */

/** Emulators whose compute has image routes in GNS3, and their directory. vpcs, hubs and switches have none. */
export const IMAGE_DIRS = { qemu: "QEMU", dynamips: "IOS", iou: "IOU" } as const;
export type ImageEmulator = keyof typeof IMAGE_DIRS;
export const isImageEmulator = (e: string): e is ImageEmulator => Object.hasOwn(IMAGE_DIRS, e);

type Ctx = Pick<AppContext, "config">;

export interface ImageEntry {
  filename: string;
  path: string;
  md5sum: string;
  filesize: number;
}

/** GNS3's ImageMissingError: the 409 names the image as the client wrote it. */
export class ImageMissingError extends ConflictError {
  constructor(readonly image: string) {
    super(`The image ${image} is missing`);
  }
}

/** `<data dir>/images/QEMU` (or IOS, IOU); may not exist yet. */
export function imageDirectory(ctx: Ctx, emulator: ImageEmulator = "qemu"): string {
  return path.join(ctx.config.dataDir, "images", IMAGE_DIRS[emulator]);
}

/**
 * The absolute path of an existing image: `name` as stored in node properties (relative to the emulator's image
 * directory). A name that is not a clean relative name → 400; one that leads out through a symlink → 403; no
 * such regular file → ImageMissingError (409 "The image <name> is missing").
 */
export async function resolveImage(ctx: Ctx, name: string, emulator: ImageEmulator = "qemu"): Promise<string> {
  if (!isImageName(name)) throw new InvalidInputError(`Invalid image name ${JSON.stringify(name)}: it must be relative to the image directory`);
  const root = imageDirectory(ctx, emulator);
  if (!(await isDirectory(root))) throw new ImageMissingError(name);
  const file = await resolveInside(root, name);
  if (!(await fs.stat(file).catch(() => undefined))?.isFile()) throw new ImageMissingError(name);
  return file;
}

/** An image's md5 (hex): from its `.md5sum` sidecar when that is not older than the file, else computed and cached. */
export async function imageMd5(file: string): Promise<string> {
  const sidecar = `${file}.md5sum`;
  const [image, cached] = await Promise.all([fs.stat(file), fs.stat(sidecar).catch(() => undefined)]);
  if (cached && cached.mtimeMs >= image.mtimeMs) {
    const text = (await fs.readFile(sidecar, "utf8")).trim();
    if (/^[0-9a-f]{32}$/.test(text)) return text;
  }
  const hash = createHash("md5");
  await pipeline(createReadStream(file), hash);
  const md5 = hash.digest("hex");
  await writeFileAtomic(sidecar, async () => md5).catch(() => {}); // a read-only store still answers
  return md5;
}

/** The md5 of each image field of a node that names an image (the `<field>_md5sum` echoes); null for "". */
export async function imageMd5s<F extends string>(ctx: Ctx, images: Record<F, string>): Promise<Record<`${F}_md5sum`, string | null>> {
  const entries = await Promise.all(
    Object.entries<string>(images).map(async ([field, name]) => [`${field}_md5sum`, name ? await imageMd5(await resolveImage(ctx, name)) : null]),
  );
  return Object.fromEntries(entries);
}

const ELF = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);

/** GNS3 lists neither tiny files (< 7 bytes) nor ELF executables as qemu images. */
async function listable(file: string, size: number): Promise<boolean> {
  if (size < 7) return false;
  const handle = await fs.open(file, "r");
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    return !head.equals(ELF);
  } finally {
    await handle.close();
  }
}

/**
 * `GET /v2/compute/<emulator>/images`: the regular files directly in the image directory (uploads in
 * sub-directories are stored but, as in GNS3, not listed), without `.md5sum` sidecars and hidden files, sorted by
 * filename (GNS3's controller sorts; so does this compute).
 */
export async function listImages(ctx: Ctx, emulator: ImageEmulator): Promise<ImageEntry[]> {
  const dir = imageDirectory(ctx, emulator);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const out: ImageEntry[] = [];
  for (const name of names.sort()) {
    if (name.endsWith(".md5sum") || name.startsWith(".")) continue;
    const file = path.join(dir, name);
    const stat = await fs.stat(file).catch(() => undefined);
    if (!stat?.isFile() || (emulator === "qemu" && !(await listable(file, stat.size)))) continue;
    out.push({ filename: name, path: name, md5sum: await imageMd5(file), filesize: stat.size });
  }
  return out;
}

/** One finishing writer (rename + sidecar) per image path, so the md5 always describes the file it sits next to. */
const finishers = new KeyedQueue();

/**
 * Where an upload named `name` goes: the real image directory joined with the name, its parent directories made
 * and proven inside (symlinks followed), the file itself not followed (a rename replaces whatever sits there).
 * Escaping → GNS3's 403 "Could not write image: <name>, <abs> is forbidden".
 */
async function uploadTarget(ctx: Ctx, emulator: ImageEmulator, name: string): Promise<string> {
  const root = imageDirectory(ctx, emulator);
  const wanted = path.resolve(root, name);
  if (!isStrictlyInside(root, wanted) || name.startsWith("/")) throw new ForbiddenError(`Could not write image: ${name}, ${wanted} is forbidden`);
  if (!isImageName(name)) throw new InvalidInputError(`Invalid image name ${JSON.stringify(name)}: no empty, hidden or '..' segments, no backslash, comma or control characters`);
  // The sidecars are ours: an upload could otherwise make the store report any md5 for an image, or (as a
  // directory `<n>.md5sum/x`) stand where the sidecar of a later `<n>` must be written.
  if (name.split("/").some((s) => s.endsWith(".md5sum"))) {
    throw new InvalidInputError(`Invalid image name ${JSON.stringify(name)}: .md5sum names are the store's checksums`);
  }
  await fs.mkdir(root, { recursive: true });
  const parent = path.dirname(name);
  const realParent = parent === "." ? await fs.realpath(root) : await resolveInside(root, parent);
  await fs.mkdir(realParent, { recursive: true }).catch(() => {
    throw new ConflictError(`Could not write image: ${name}, ${parent} is not a directory`);
  });
  return path.join(realParent, path.basename(name));
}

/** An upload's temporary file, hidden beside its target; one a killed server left is removed at the next start. */
const uploadTemp = (target: string) => path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(4).toString("hex")}.tmp`);
const UPLOAD_TEMP = /^\..+\.[0-9a-f]{8}\.tmp$/;

/**
 * Stores an upload: streamed to a hidden temporary file next to the target while its md5 is computed, then
 * renamed over the target and the sidecar written. More than `limit` bytes → 413 and nothing is kept.
 */
export async function saveImage(ctx: Ctx, emulator: ImageEmulator, name: string, body: Readable, limit: number): Promise<ImageEntry> {
  const target = await uploadTarget(ctx, emulator, name);
  const tmp = uploadTemp(target);
  const hash = createHash("md5");
  try {
    const size = await writeBodyToFile(body, tmp, {
      limit,
      tooLarge: `Image ${name} is larger than the upload limit (${limit} bytes)`,
      interrupted: `The upload of ${name} was interrupted`,
      onChunk: (chunk) => hash.update(chunk),
    });
    // Checked before it takes its name, so a refused image is never in the store, not even for a moment.
    if (emulator === "qemu") await checkImageReferences(imageDirectory(ctx, emulator), tmp, name, true);
    const md5 = hash.digest("hex");
    await finishers.run(target, async () => {
      // The sidecar first: when it cannot be written (a directory of an older store sits there), nothing is kept.
      // The image renamed after it keeps its older mtime, so the sidecar counts as current (imageMd5).
      const sidecar = `${target}.md5sum`;
      await writeFileAtomic(sidecar, async () => md5).catch((e: NodeJS.ErrnoException) => {
        throw e.code === "EISDIR" ? new ConflictError(`Could not write image: ${name}.md5sum is a directory`) : e;
      });
      await fs.rename(tmp, target).catch(async (e: NodeJS.ErrnoException) => {
        await fs.rm(sidecar, { force: true }); // it describes the file that was not written; the old one's is recomputed
        throw e.code === "EISDIR" || e.code === "ENOTEMPTY" ? new ConflictError(`Could not write image: ${name} is a directory`) : e;
      });
    });
    return { filename: path.basename(name), path: name, md5sum: md5, filesize: size };
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

/**
 * Start-up: removes what uploads interrupted by a crash left (up to the upload limit each) anywhere in the image
 * store. Only files named as saveImage names its temporary files, found without following symlinks.
 */
export async function removeInterruptedUploads(ctx: Ctx): Promise<string[]> {
  const removed: string[] = [];
  for (const emulator of Object.keys(IMAGE_DIRS) as ImageEmulator[]) {
    const root = imageDirectory(ctx, emulator);
    const entries = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (!e.isFile() || !UPLOAD_TEMP.test(e.name)) continue;
      const file = path.join(e.parentPath, e.name);
      await fs.rm(file, { force: true });
      removed.push(file);
    }
  }
  return removed;
}

async function isDirectory(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => undefined))?.isDirectory() ?? false;
}

const UNITS: Record<string, number> = { b: 1, kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30, tb: 2 ** 40, pb: 2 ** 50 };

/** The upload limit setting ("2gb", "512mb", "1048576") in bytes, read as express reads body limits (1024-based). */
export function uploadLimitBytes(ctx: Ctx): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)?\s*$/i.exec(ctx.config.uploadLimit);
  if (!m) return 2 * UNITS.gb; // the default, as for a setting express could not read either
  return Math.floor(Number(m[1]) * UNITS[(m[2] ?? "b").toLowerCase()]);
}
