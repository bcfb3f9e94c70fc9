import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import yauzl from "yauzl";
import yazl from "yazl";
import { ConflictError, PayloadTooLargeError } from "../../platform/core/errors.js";
import { SVG_MAX_LENGTH } from "../drawings/svg.js";
import { parseJson } from "../../platform/http/safe-json.js";
import { resolveInside } from "../files/safe-path.js";
import { gns3Body } from "../rest/json.js";
import { MAX_TOPOLOGY_BYTES, type TopologyDocument } from "./document.js";
import { inlinePictures, PICTURES_DIR } from "./pictures.js";

/**
 * .gns3project / .gns3snapshot archives (compat §13): a zip holding `project.gns3` first, then the project
 * directory tree minus what GNS3 leaves out (logs, captures, tmp, snapshots unless asked, the topology file
 * itself, which project.gns3 replaces).
 */
export const ARCHIVE_TOPOLOGY = "project.gns3";

export interface ArchiveOptions {
  compress: boolean;
  includeSnapshots: boolean;
  /** The project's own `<name>.gns3` (and its .backup/.tmp siblings): replaced by project.gns3. */
  topologyFile: string;
}

function excluded(rel: string, isDir: boolean, opts: ArchiveOptions): boolean {
  const base = path.posix.basename(rel);
  if (isDir) {
    return (
      (rel === "snapshots" && !opts.includeSnapshots) || rel === "project-files/captures" || rel === "project-files/tmp"
    );
  }
  return (
    base === ".DS_Store" ||
    base.endsWith("_log.txt") ||
    base.endsWith(".log") ||
    (!rel.includes("/") && (base === opts.topologyFile || base.startsWith(`${opts.topologyFile}.`)))
  );
}

/** Builds the archive; the caller pipes `outputStream` where it wants. Symlinks are never followed. */
export async function createArchive(projectDir: string, doc: TopologyDocument, opts: ArchiveOptions): Promise<yazl.ZipFile> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(gns3Body(doc)), ARCHIVE_TOPOLOGY, { compress: opts.compress });
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(path.join(projectDir, rel), { withFileTypes: true }).catch(() => []);
    if (rel && entries.length === 0) zip.addEmptyDirectory(rel);
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory() && !excluded(child, true, opts)) await walk(child);
      else if (e.isFile() && !excluded(child, false, opts)) zip.addFile(path.join(projectDir, child), child, { compress: opts.compress });
    }
  };
  await walk("");
  zip.end();
  return zip;
}

export async function archiveToBuffer(zip: yazl.ZipFile): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** What an imported archive may hold: unpacked bytes in total and entries (PATCHBAY_ARCHIVE_*_LIMIT). */
export interface ArchiveLimits {
  inflatedBytes: number;
  entries: number;
}

export interface ArchiveEntry {
  name: string;
  directory: boolean;
  /** Unpacked bytes, as the archive declares them (yauzl fails an entry whose data says otherwise). */
  size: number;
}

/** An archive file whose entries were all checked; their data is inflated only when read or extracted. */
export interface Archive {
  entries: ArchiveEntry[];
  /** The data of an entry held in memory, refused (409) beyond `max` bytes. */
  read(name: string, max: number): Promise<Buffer | undefined>;
  /** Streams the entries (except project.gns3 and those `skip` rejects) to files under `dest`. */
  extract(dest: string, opts?: { skip?: (name: string) => boolean; rename?: (name: string) => string }): Promise<void>;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const unsafe = (why: string) => new ConflictError(`Cannot import project, unsafe archive entry: ${why}`);

/**
 * Opens an archive file and checks every entry from its central directory before anything is inflated or
 * written: names that escape (`../`, absolute, drive letters, backslashes) and symlink entries make the whole
 * archive unsafe (409); more entries or unpacked bytes than `limits` allow, 413. Not a zip at all → GNS3's
 * "invalid zip" 409. `use` runs with the archive open; it is closed after.
 */
export async function withArchive<T>(file: string, limits: ArchiveLimits, use: (archive: Archive) => Promise<T>): Promise<T> {
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(file, { lazyEntries: true, autoClose: false, strictFileNames: true, decodeStrings: true }, (err, z) => (err ? reject(err) : resolve(z!))),
    );
  } catch {
    throw new ConflictError("Cannot import project, not a GNS3 project (invalid zip)");
  }
  try {
    if (zip.entryCount > limits.entries) throw new PayloadTooLargeError(`Cannot import project: the archive holds more than ${limits.entries} entries (PATCHBAY_ARCHIVE_ENTRY_LIMIT)`);
    const found = await checkedEntries(zip, limits);
    const open = (name: string) => {
      const entry = found.get(name);
      return entry && new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err ? reject(unsafe(err.message)) : resolve(stream!))));
    };
    const entries = [...found.values()].map((e) => ({ name: entryName(e), directory: e.fileName.endsWith("/"), size: e.uncompressedSize }));
    return await use({
      entries,
      async read(name, max) {
        const entry = found.get(name);
        if (!entry) return undefined;
        if (entry.uncompressedSize > max) throw new ConflictError(`Cannot import project: ${name} is larger than ${max} bytes`);
        const chunks: Buffer[] = [];
        for await (const c of (await open(name))!) chunks.push(c as Buffer);
        return Buffer.concat(chunks);
      },
      async extract(dest, opts = {}) {
        await fs.mkdir(dest, { recursive: true });
        for (const e of entries) {
          if (e.name === ARCHIVE_TOPOLOGY || opts.skip?.(e.name)) continue;
          const target = await resolveInside(dest, opts.rename ? opts.rename(e.name) : e.name).catch(() => {
            throw unsafe(e.name);
          });
          if (e.directory) await fs.mkdir(target, { recursive: true });
          else {
            await fs.mkdir(path.dirname(target), { recursive: true });
            await pipeline((await open(e.name))!, createWriteStream(target));
          }
        }
      },
    });
  } finally {
    zip.close();
  }
}

const entryName = (e: yauzl.Entry) => (e.fileName.endsWith("/") ? e.fileName.slice(0, -1) : e.fileName);

/** Every entry of the central directory, by name, once its name, type and the running total size are checked. */
function checkedEntries(zip: yauzl.ZipFile, limits: ArchiveLimits): Promise<Map<string, yauzl.Entry>> {
  return new Promise((resolve, reject) => {
    const found = new Map<string, yauzl.Entry>();
    let inflated = 0;
    zip.on("error", (e: Error) => reject(unsafe(e.message)));
    zip.on("end", () => resolve(found));
    zip.on("entry", (entry: yauzl.Entry) => {
      const name = entry.fileName;
      if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) return reject(unsafe(`symbolic link ${name}`));
      if (name.split("/").includes("..") || name.startsWith("/") || name.includes("\\")) return reject(unsafe(name));
      inflated += entry.uncompressedSize;
      if (inflated > limits.inflatedBytes) {
        return reject(new PayloadTooLargeError(`Cannot import project: the archive unpacks to more than ${limits.inflatedBytes} bytes (PATCHBAY_ARCHIVE_INFLATED_LIMIT)`));
      }
      found.set(entryName(entry), entry);
      zip.readEntry();
    });
    zip.readEntry();
  });
}

/** The parsed project.gns3 of an archive, with GNS3's import error messages and its drawings' pictures inline. */
export async function archiveTopologyJson(archive: Archive): Promise<unknown> {
  const topo = await archive.read(ARCHIVE_TOPOLOGY, MAX_TOPOLOGY_BYTES);
  if (!topo) throw new ConflictError("Cannot import project, project.gns3 file could not be found");
  let json: unknown;
  try {
    json = parseJson(topo.toString("utf8")); // client-supplied: no prototype keys, bounded depth
  } catch {
    throw new ConflictError("Cannot import project, the project.gns3 file is corrupted");
  }
  return inlinePictures(json, (name) => archive.read(`${PICTURES_DIR}/${name}`, SVG_MAX_LENGTH));
}

/** Entry renaming for regenerated node ids: project-files/<type>/<old id>/… follows the node's new id. */
export const followNodeIds = (nodeIds: Map<string, string>) => (name: string) => {
  const parts = name.split("/");
  if (parts[0] === "project-files" && parts.length >= 3 && nodeIds.has(parts[2])) parts[2] = nodeIds.get(parts[2])!;
  return parts.join("/");
};
