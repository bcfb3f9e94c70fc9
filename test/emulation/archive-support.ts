import yauzl from "yauzl";
import yazl from "yazl";

export interface ZipEntryInfo {
  name: string;
  /** 0 = stored, 8 = deflate */
  method: number;
  data: Buffer;
}

/** Every entry of a zip, in archive order, read with yauzl independently of the server's own reader. */
export function unzip(buf: Buffer): Promise<ZipEntryInfo[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const out: ZipEntryInfo[] = [];
      zip!.on("error", reject);
      zip!.on("end", () => resolve(out));
      zip!.on("entry", (e: yauzl.Entry) => {
        if (e.fileName.endsWith("/")) {
          out.push({ name: e.fileName, method: e.compressionMethod, data: Buffer.alloc(0) });
          return zip!.readEntry();
        }
        zip!.openReadStream(e, async (err2, stream) => {
          if (err2) return reject(err2);
          const chunks: Buffer[] = [];
          for await (const c of stream!) chunks.push(c as Buffer);
          out.push({ name: e.fileName, method: e.compressionMethod, data: Buffer.concat(chunks) });
          zip!.readEntry();
        });
      });
      zip!.readEntry();
    });
  });
}

/** A zip of the given files (project.gns3 first when present, as GNS3 writes it). */
export async function zip(files: Record<string, string | Buffer>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, data] of Object.entries(files)) z.addBuffer(Buffer.from(data), name);
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Raw bytes in, parsed JSON out (the test helper `call` only sends JSON/text). */
export async function postBytes(base: string, url: string, body: Buffer) {
  const res = await fetch(base + url, { method: "POST", body: new Uint8Array(body) });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: res.status, body: parsed, text };
}

export async function getBytes(base: string, url: string) {
  const res = await fetch(base + url);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/**
 * An archive of an empty topology and `entries`. yazl refuses unsafe names, so archives are built with
 * same-length placeholders that are patched afterwards.
 */
export async function zipWith(entries: { name: string; placeholder?: string; data?: string; mode?: number }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(JSON.stringify(topology("evil"))), "project.gns3");
  for (const e of entries) {
    zip.addBuffer(Buffer.from(e.data ?? "x"), e.placeholder ?? e.name, e.mode ? { mode: e.mode } : {});
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  let buf = Buffer.concat(chunks);
  for (const e of entries) {
    if (!e.placeholder) continue;
    if (e.placeholder.length !== e.name.length) throw new Error(`placeholder ${e.placeholder} must be as long as ${e.name}`);
    let at = buf.indexOf(e.placeholder);
    while (at >= 0) {
      buf.write(e.name, at, "latin1");
      at = buf.indexOf(e.placeholder, at + 1);
    }
  }
  return buf;
}

export const topology = (name: string) => ({
  project_id: "00000000-0000-4000-8000-000000000000",
  name,
  type: "topology",
  revision: 9,
  version: "2.2.59",
  topology: { nodes: [], links: [], drawings: [], computes: [] },
});
