/** Width and height of an SVG (attributes, else viewBox), PNG or GIF image; undefined when unknown. */
export function imageSize(data: Buffer): { width: number; height: number } | undefined {
  if (data.length >= 24 && data.readUInt32BE(0) === 0x89504e47) return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  if (data.length >= 10 && data.subarray(0, 3).toString("latin1") === "GIF") return { width: data.readUInt16LE(6), height: data.readUInt16LE(8) };
  const svg = /<svg\b[^>]*>/i.exec(data.toString("utf8"))?.[0];
  if (!svg) return undefined;
  const attr = (name: string) => new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, "i").exec(svg)?.[1];
  const length = (v: string | undefined) => {
    const m = v && /^\s*([\d.]+)\s*(px)?\s*$/.exec(v);
    return m ? Math.round(Number(m[1])) : undefined;
  };
  const box = attr("viewBox")?.trim().split(/[\s,]+/).map(Number);
  const width = length(attr("width")) ?? (box?.length === 4 ? Math.round(box[2]) : undefined);
  const height = length(attr("height")) ?? (box?.length === 4 ? Math.round(box[3]) : undefined);
  return width !== undefined && height !== undefined ? { width, height } : undefined;
}
