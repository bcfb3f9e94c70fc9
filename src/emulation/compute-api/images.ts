import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { AppContext } from "../../platform/context.js";

/**
 * `GET /v2/compute/{emulator}/images` for the emulators whose compute has that route in GNS3: the files of
 * <dataDir>/images/<QEMU|IOS|IOU> (GNS3's images directory layout), each with its md5. This host cannot run
 * them, but the list is true — usually empty. vpcs, hubs and switches have no images (and no route: 404).
 */
export const IMAGE_DIRS: Record<string, string> = { qemu: "QEMU", dynamips: "IOS", iou: "IOU" };

export interface ImageEntry {
  filename: string;
  path: string;
  md5sum: string;
  filesize: number;
}

function md5(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("md5");
    fs.createReadStream(file)
      .on("data", (c) => hash.update(c))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

export async function listImages(ctx: AppContext, emulator: string): Promise<ImageEntry[]> {
  const dir = path.join(ctx.config.dataDir, "images", IMAGE_DIRS[emulator]);
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch {
    return []; // no images directory yet: no images
  }
  const out: ImageEntry[] = [];
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    const stat = await fs.promises.stat(file).catch(() => undefined);
    // GNS3 skips its own .md5sum side files and anything that is not a regular file.
    if (!stat?.isFile() || name.endsWith(".md5sum") || name.startsWith(".")) continue;
    out.push({ filename: name, path: name, md5sum: await md5(file), filesize: stat.size });
  }
  return out;
}
