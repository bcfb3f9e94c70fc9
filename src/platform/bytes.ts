/** Byte sizes as the settings write them ("1mb", "64kb", "2gb", "512"), read as express reads them: 1 kb = 1024 bytes. */
export function parseBytes(size: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)?\s*$/i.exec(size);
  if (!m) throw new Error(`not a byte size: ${size}`);
  const power = ["b", "kb", "mb", "gb", "tb", "pb"].indexOf((m[2] ?? "b").toLowerCase());
  return Math.floor(Number(m[1]) * 1024 ** power);
}
