import { ConflictError } from "../../platform/core/errors.js";

/**
 * GNS3 keeps a drawing's picture out of the .gns3 file: an SVG of 500+ characters holding one embedded image,
 * and any SVG over 1000 characters, are written to project-files/images/<md5>.<ext> and the drawing's `svg`
 * holds that file name. Patchbay keeps drawings whole in its database, so an archive from GNS3 has its pictures
 * put back inline on import — as GNS3 itself serves them (an image file rebuilt into an <svg> wrapper).
 */
export const PICTURES_DIR = "project-files/images";
const PICTURE_NAME = /^[\w-]+\.(svg|png|jpe?g|gif)$/i;

/** Width, height and type of a PNG, GIF or JPEG, read from its header. */
function imageSize(data: Buffer): { width: number; height: number; type: string } | undefined {
  if (data.length >= 24 && data.readUInt32BE(0) === 0x89504e47) return { width: data.readUInt32BE(16), height: data.readUInt32BE(20), type: "png" };
  if (data.length >= 10 && data.toString("latin1", 0, 4) === "GIF8") return { width: data.readUInt16LE(6), height: data.readUInt16LE(8), type: "gif" };
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return undefined;
  for (let i = 2; i + 9 < data.length; ) {
    if (data[i] !== 0xff) return undefined;
    const marker = data[i + 1];
    const frame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (frame) return { width: data.readUInt16BE(i + 7), height: data.readUInt16BE(i + 5), type: "jpeg" };
    i += 2 + data.readUInt16BE(i + 2);
  }
  return undefined;
}

/** The SVG GNS3 serves for a picture file. */
function pictureSvg(name: string, data: Buffer): string {
  if (name.toLowerCase().endsWith(".svg")) return data.toString("utf8");
  const size = imageSize(data);
  if (!size) throw new ConflictError(`Cannot import project, the picture ${name} is not a PNG, GIF or JPEG image`);
  const { width: w, height: h, type } = size;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" height="${h}" width="${w}">\n` +
    `<image height="${h}" width="${w}" xlink:href="data:image/${type};base64,${data.toString("base64")}" />\n</svg>`
  );
}

/** Replaces, in a parsed topology document, drawings that name a picture file with the picture itself. */
export async function inlinePictures(json: unknown, readPicture: (name: string) => Promise<Buffer | undefined>): Promise<unknown> {
  const drawings = (json as { topology?: { drawings?: unknown } } | null)?.topology?.drawings;
  if (!Array.isArray(drawings)) return json;
  for (const d of drawings as { drawing_id?: unknown; svg?: unknown }[]) {
    if (typeof d?.svg !== "string" || !PICTURE_NAME.test(d.svg)) continue;
    const data = await readPicture(d.svg);
    if (!data) throw new ConflictError(`Cannot import project, drawing ${String(d.drawing_id)} shows the picture ${d.svg}, which the archive does not hold`);
    d.svg = pictureSvg(d.svg, data);
  }
  return json;
}
