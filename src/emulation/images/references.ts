import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { ConflictError } from "../../platform/core/errors.js";
import { resolveInside } from "../files/safe-path.js";
import { findOnPath } from "../../platform/core/executables.js";

/**
 * What QEMU opens besides an image file itself: its backing file, a qcow2 external data file, a vmdk's extents.
 * An uploaded qcow2 whose backing file is `/etc/shadow` hands that file to the guest, so each of these must be a
 * file of the image store (a relative backing name inside it is fine). Read with `qemu-img info`, which probes the
 * format as QEMU does, one link at a time: `--backing-chain` would open every backing file — a host FIFO, an
 * `nbd:` socket — before it could be refused.
 */

/** An image that refers to something outside the image store. */
export class UnsafeImageError extends ConflictError {}

const run = promisify(execFile);
const MAX_CHAIN = 16;

interface ImageInfo {
  "backing-filename"?: string;
  "full-backing-filename"?: string;
  "format-specific"?: { type?: string; data?: { "data-file"?: string; extents?: { filename?: string }[] } };
}

async function imageInfo(qemuImg: string, file: string): Promise<ImageInfo> {
  // `file` is a path of ours (absolute: never read as an option or a protocol); the limits bound a hostile header.
  const { stdout } = await run(qemuImg, ["info", "-U", "--output=json", file], { timeout: 30_000, maxBuffer: 2 ** 20 });
  return JSON.parse(stdout) as ImageInfo;
}

/** A reference as QEMU reads it: relative to the image's directory; anything with a protocol (`json:`, `nbd:`) is not a file. */
function referencedPath(reference: string, imageDir: string): string | null {
  if (reference.startsWith("/")) return reference;
  return /^[^/]*:/.test(reference) ? null : path.resolve(imageDir, reference);
}

/**
 * Refuses (409 UnsafeImageError) an image of the store at `file` (`name` for the message) that makes QEMU open
 * anything outside `root`, following the backing chain through the store. Returns `file` and every existing file
 * it refers to: what QEMU opens with it (a confined VM is given exactly these). Without qemu-img nothing can be
 * read: `optional` lets the caller accept that (an upload: the check at use still comes), else 409.
 */
export async function checkImageReferences(root: string, file: string, name: string, optional = false): Promise<string[]> {
  const opens = [file];
  const qemuImg = findOnPath("qemu-img");
  if (!qemuImg) {
    if (optional) return opens;
    throw new ConflictError(`qemu-img is not installed on this host (Debian package qemu-utils): image ${name} cannot be checked`);
  }
  let current: string | null = file;
  for (let depth = 0; current && depth < MAX_CHAIN; depth++) {
    const info: ImageInfo = await imageInfo(qemuImg, current).catch((e: { stderr?: string; message: string }) => {
      throw new UnsafeImageError(`Image ${name} cannot be read by qemu-img: ${(e.stderr ?? e.message).trim().slice(0, 300)}`);
    });
    const dir = path.dirname(current);
    const backing: string | undefined = info["full-backing-filename"] ?? info["backing-filename"];
    const data = info["format-specific"]?.data;
    const references: [string, string | undefined][] = [
      ["backing file", backing],
      ["data file", data?.["data-file"]],
      ...(data?.extents ?? []).map((e): [string, string | undefined] => ["extent", e.filename]),
    ];
    for (const [kind, reference] of references) {
      if (!reference || reference === current) continue;
      const target = referencedPath(reference, dir);
      if (!target || !(await resolveInside(root, target).then(() => true, () => false))) {
        throw new UnsafeImageError(`Image ${name} refers to ${kind} ${reference}, outside the image store`);
      }
      if (!opens.includes(target) && (await fileExists(target))) opens.push(target);
    }
    current = backing ? referencedPath(backing, dir) : null;
    if (current && !(await fileExists(current))) current = null; // a base not uploaded yet: checked when it is
  }
  if (current) throw new UnsafeImageError(`Image ${name} has a backing chain deeper than ${MAX_CHAIN} images`);
  return opens;
}

async function fileExists(file: string): Promise<boolean> {
  return (await fs.stat(file).catch(() => undefined))?.isFile() ?? false;
}
