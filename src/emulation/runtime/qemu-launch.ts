import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, DomainError } from "../../platform/core/errors.js";
import { checkImageReferences } from "../images/references.js";
import { ImageMissingError, imageDirectory, resolveImage } from "../images/store.js";
import { qemuBaseMac, readCustomAdapters } from "../node-model/adapters.js";
import { qemuBinaryName, readQemuProperties, type QemuProperties } from "../node-model/qemu-properties.js";
import { parseQemuOptions, qemuOptionsArgv, qemuOptionsMemoryMb, splitQemuOptions } from "../node-model/qemu-options.js";
import { optionChecksOffForTests } from "./confinement.js";
import { nodeProperties } from "../node-model/serialize.js";
import { findOnPath } from "../../platform/core/executables.js";
import { qemuArgs, type QemuLaunch, type QemuNic } from "./qemu-command.js";
import { kvmUsable, linkedClone } from "./qemu-host.js";
import { DEFAULT_NICE, qemuAddressSpace, qmpSocketPath, type QemuProcessOptions } from "./qemu.js";

/**
 * Turns a qemu node row into what runs: the binary (by name in PATH), every image resolved through the image
 * store (a missing one → 409 naming it), disks as linked clones in the node directory, the accelerator, the
 * command line, and what the confined process is given (the images and their backing chains, read-only; its
 * address-space limit). Nothing is spawned here.
 */
const DISKS = ["hda", "hdb", "hdc", "hdd"] as const;

/** GNS3's process_priority as niceness; never above normal priority (the API must win over a booting guest). */
const NICENESS: Record<string, number> = { "very low": 19, low: DEFAULT_NICE };

export function qemuProperties(node: Pick<Node, "id" | "propertiesJson">): QemuProperties {
  const p = readQemuProperties(nodeProperties(node));
  return { ...p, mac_address: p.mac_address || qemuBaseMac(node.id) };
}

/** The emulator binary of a node, or the 409 GNS3 gives when it has none (compat-qemu §2). */
export function qemuBinary(node: Pick<Node, "name" | "id" | "propertiesJson">): string {
  const name = qemuBinaryName(qemuProperties(node));
  const found = name ? findOnPath(name) : null;
  if (!found) throw new ConflictError(`QEMU binary path ${name ?? "qemu-system-None"} is not found in the path (node ${node.name})`);
  return found;
}

/**
 * The node's options as they will run: placeholders expanded with its values and checked again, since a node
 * stored before a rule or imported never met it — 409 with GNS3's message. With the RAM the cap counts (MB):
 * `ram` plus the options' memory backends and video memory.
 */
export function qemuNodeOptions(node: Pick<Node, "id" | "name" | "projectId" | "console" | "propertiesJson">): { argv: string[]; memoryMb: number } {
  const p = qemuProperties(node);
  if (optionChecksOffForTests()) return { argv: splitQemuOptions(p.options ?? ""), memoryMb: p.ram };
  try {
    const parsed = parseQemuOptions(p.options, node);
    return { argv: qemuOptionsArgv(parsed), memoryMb: p.ram + qemuOptionsMemoryMb(parsed) };
  } catch (e) {
    if (e instanceof DomainError && e.status === 400) throw new ConflictError(e.message);
    throw e;
  }
}

/** An image of the store; a file that vanished since the node was set names the property in the 409. */
async function image(ctx: AppContext, field: string, name: string): Promise<string | undefined> {
  if (!name) return undefined;
  try {
    return await resolveImage(ctx, name);
  } catch (e) {
    if (e instanceof ImageMissingError) throw new ConflictError(`${e.message} (${field})`);
    throw e;
  }
}

/**
 * An image QEMU opens as a block device (disk, CD-ROM): all it refers to (backing chain…) must be in the store too.
 * The image first, then the store files QEMU opens with it; none without an image.
 */
async function blockImage(ctx: AppContext, field: string, name: string): Promise<string[]> {
  const file = await image(ctx, field, name);
  return file ? checkImageReferences(imageDirectory(ctx), file, `${name} (${field})`) : [];
}

export interface QemuLaunchInput {
  node: Node;
  workdir: string;
  runDir: string;
  owner: string;
  nics: QemuNic[];
}

export async function prepareQemu(ctx: AppContext, input: QemuLaunchInput): Promise<Omit<QemuProcessOptions, "onExit">> {
  const { node, workdir } = input;
  const p = qemuProperties(node);
  const options = qemuNodeOptions(node);
  const binary = qemuBinary(node);
  const disks: QemuLaunch["disks"] = {};
  const readOnly: string[] = [];
  for (const d of DISKS) {
    const opens = await blockImage(ctx, `${d}_disk_image`, p[`${d}_disk_image`]);
    if (!opens.length) continue;
    readOnly.push(...opens);
    const base = opens[0];
    // Without linked_clone GNS3 boots the base itself (one node only); here it is a clone all the same, so an
    // image is never written by a node — the difference is documented (runtime README).
    disks[d] = { file: await linkedClone(base, workdir, d), interface: p[`${d}_disk_interface`] };
  }
  const qmpSocket = qmpSocketPath(input.runDir, node.id);
  const consoleHost = ctx.config.host === "::" ? "0.0.0.0" : ctx.config.host;
  const cdrom = await blockImage(ctx, "cdrom_image", p.cdrom_image);
  const files = {
    cdrom: cdrom[0],
    bios: await image(ctx, "bios_image", p.bios_image),
    kernel: await image(ctx, "kernel_image", p.kernel_image),
    initrd: await image(ctx, "initrd", p.initrd),
  };
  readOnly.push(...cdrom, ...[files.bios, files.kernel, files.initrd].filter((f) => f !== undefined));
  const launch: QemuLaunch = {
    nodeId: node.id,
    name: node.name,
    properties: p,
    options: options.argv,
    customAdapters: readCustomAdapters(node.customAdapters),
    disks,
    ...files,
    console: node.consoleType === "telnet" && node.console != null ? { host: consoleHost, port: node.console } : undefined,
    qmpSocket,
    nics: input.nics,
    accel: (await kvmUsable(binary)) ? "kvm" : "tcg",
  };
  const args = qemuArgs(launch);
  return {
    owner: input.owner,
    nodeId: node.id,
    name: node.name,
    workdir,
    runDir: input.runDir,
    binary,
    args,
    qmpSocket,
    readOnly,
    addressSpace: qemuAddressSpace(options.memoryMb, Math.max(p.cpus, p.maxcpus)),
    ram: options.memoryMb,
    onClose: p.on_close,
    nice: NICENESS[p.process_priority] ?? DEFAULT_NICE,
  };
}
