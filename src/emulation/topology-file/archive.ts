import fs from "node:fs/promises";
import path from "node:path";
import yauzl from "yauzl";
import yazl from "yazl";
import { ConflictError } from "../../platform/errors.js";
import { parseJson } from "../../platform/http/safe-json.js";
import { resolveInside } from "../files/safe-path.js";
import { gns3Body } from "../rest/json.js";
import type { TopologyDocument } from "./document.js";
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

export interface ArchiveEntry {
  name: string;
  directory: boolean;
  data: Buffer;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/**
 * Reads and checks every entry before anything is written: entry names that escape (`../`, absolute, drive
 * letters, backslashes) and symlink entries make the whole archive unsafe (409), so a partial extraction never
 * happens. Not a zip at all → GNS3's "invalid zip" 409.
 */
export async function readArchive(buffer: Buffer): Promise<ArchiveEntry[]> {
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(buffer, { lazyEntries: true, strictFileNames: true, decodeStrings: true }, (err, z) =>
        err ? reject(err) : resolve(z!),
      ),
    );
  } catch {
    throw new ConflictError("Cannot import project, not a GNS3 project (invalid zip)");
  }
  const unsafe = (why: string) => new ConflictError(`Cannot import project, unsafe archive entry: ${why}`);
  return new Promise<ArchiveEntry[]>((resolve, reject) => {
    const out: ArchiveEntry[] = [];
    const fail = (e: Error) => {
      zip.close();
      reject(e instanceof ConflictError ? e : unsafe(e.message));
    };
    zip.on("error", fail);
    zip.on("end", () => resolve(out));
    zip.on("entry", (entry: yauzl.Entry) => {
      const name = entry.fileName;
      if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) return fail(unsafe(`symbolic link ${name}`));
      if (name.split("/").includes("..") || name.startsWith("/") || name.includes("\\")) return fail(unsafe(name));
      if (name.endsWith("/")) {
        out.push({ name: name.slice(0, -1), directory: true, data: Buffer.alloc(0) });
        return zip.readEntry();
      }
      zip.openReadStream(entry, async (err, stream) => {
        if (err) return fail(err);
        try {
          const chunks: Buffer[] = [];
          for await (const c of stream!) chunks.push(c as Buffer);
          out.push({ name, directory: false, data: Buffer.concat(chunks) });
          zip.readEntry();
        } catch (e) {
          fail(e as Error);
        }
      });
    });
    zip.readEntry();
  });
}

/** The parsed project.gns3 of an archive, with GNS3's import error messages and its drawings' pictures inline. */
export function archiveTopologyJson(entries: ArchiveEntry[]): unknown {
  const topo = entries.find((e) => e.name === ARCHIVE_TOPOLOGY && !e.directory);
  if (!topo) throw new ConflictError("Cannot import project, project.gns3 file could not be found");
  let json: unknown;
  try {
    json = parseJson(topo.data.toString("utf8")); // client-supplied: no prototype keys, bounded depth
  } catch {
    throw new ConflictError("Cannot import project, the project.gns3 file is corrupted");
  }
  const files = new Map(entries.filter((e) => !e.directory).map((e) => [e.name, e.data]));
  return inlinePictures(json, (name) => files.get(`${PICTURES_DIR}/${name}`));
}

/** Entry renaming for regenerated node ids: project-files/<type>/<old id>/… follows the node's new id. */
export const followNodeIds = (nodeIds: Map<string, string>) => (name: string) => {
  const parts = name.split("/");
  if (parts[0] === "project-files" && parts.length >= 3 && nodeIds.has(parts[2])) parts[2] = nodeIds.get(parts[2])!;
  return parts.join("/");
};

/**
 * Writes the entries (except project.gns3 and those `skip` rejects) under `dest`, each through the path door.
 * `rename` maps an entry name to its final name (per-node directories follow regenerated node ids).
 */
export async function extractArchive(
  entries: ArchiveEntry[],
  dest: string,
  opts: { skip?: (name: string) => boolean; rename?: (name: string) => string } = {},
): Promise<void> {
  await fs.mkdir(dest, { recursive: true });
  for (const e of entries) {
    if (e.name === ARCHIVE_TOPOLOGY || opts.skip?.(e.name)) continue;
    const target = await resolveInside(dest, opts.rename ? opts.rename(e.name) : e.name).catch(() => {
      throw new ConflictError(`Cannot import project, unsafe archive entry: ${e.name}`);
    });
    if (e.directory) await fs.mkdir(target, { recursive: true });
    else {
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(target, e.data, { flag: "w" });
    }
  }
}
