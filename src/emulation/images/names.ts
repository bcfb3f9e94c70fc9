import { z } from "zod";

/**
 * An image name as clients write it (node properties, upload paths): relative to the emulator's image directory,
 * `/`-separated (GNS3 stores uploads with a `/` in sub-directories), every segment a plain file name — no empty,
 * `.` or `..` segment, no hidden names (temporary files of uploads are hidden), no backslash or control character,
 * no comma: QEMU splits `-initrd` at commas into multiboot modules (`m,/etc/shadow` would load a host file), and
 * escaping it (`,,`) is right for some options and wrong for others.
 */
const SEGMENT = /^[^/\\\u0000-\u001f\u007f.,][^/\\\u0000-\u001f\u007f,]{0,254}$/;

export function isImageName(name: string): boolean {
  return name.length > 0 && name.length <= 1024 && name.split("/").every((s) => SEGMENT.test(s));
}

export const imageNameSchema = z.string().refine(isImageName, "must be an image name relative to the image directory (no '..', no absolute path, no comma)");
