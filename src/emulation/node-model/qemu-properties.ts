import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { parseInput } from "../../platform/input.js";
import { LOCAL_ID } from "../computes/model.js";
import { imageNameSchema } from "../images/names.js";
import { ImageMissingError, imageMd5, resolveImage } from "../images/store.js";
import { MAC_PATTERN, qemuBaseMac } from "./adapters.js";
import {
  ForbiddenQemuOption,
  parseQemuOptions,
  PLACEHOLDER_STANDINS,
  qemuOptionsMemoryMb,
  rewriteQemuOptions,
  type QemuOptionNode,
} from "./qemu-options.js";

/**
 * The qemu node's properties (GNS3 2.2's qemu schema, compat-qemu §2): what a client may set, GNS3's compute
 * defaults, and the rules that keep every value safe to put on a qemu command line. Properties are stored in the
 * node row under GNS3's names (as every node type's are) and returned as GNS3 returns them: all keys present,
 * image fields relative to `images/QEMU`, each with its `<field>_md5sum` echo.
 */

export const QEMU_PLATFORMS = [
  "aarch64", "alpha", "arm", "cris", "i386", "lm32", "m68k", "microblaze", "microblazeel", "mips", "mips64", "mips64el",
  "mipsel", "moxie", "or32", "ppc", "ppc64", "ppcemb", "s390x", "sh4", "sh4eb", "sparc", "sparc64", "tricore", "unicore32",
  "x86_64", "xtensa", "xtensaeb",
] as const;
/** GNS3's template enum; also used for nodes, since the value becomes a `-device` driver name. */
export const QEMU_ADAPTER_TYPES = [
  "e1000", "e1000-82544gc", "e1000-82545em", "e1000e", "i82550", "i82551", "i82557a", "i82557b", "i82557c", "i82558a",
  "i82558b", "i82559a", "i82559b", "i82559c", "i82559er", "i82562", "i82801", "ne2k_pci", "pcnet", "rocker", "rtl8139",
  "virtio", "virtio-net-pci", "vmxnet3",
] as const;
export const QEMU_DISK_INTERFACES = ["ide", "sata", "nvme", "scsi", "sd", "mtd", "floppy", "pflash", "virtio", "none"] as const;
export const QEMU_BOOT_PRIORITIES = ["c", "d", "n", "cn", "cd", "dn", "dc", "nc", "nd"] as const;
export const QEMU_ON_CLOSE = ["power_off", "shutdown_signal", "save_vm_state"] as const;
export const QEMU_PROCESS_PRIORITIES = ["realtime", "very high", "high", "normal", "low", "very low"] as const;
/** Console types a qemu node serves here: the serial port on telnet, or none (no VNC/SPICE). */
export const QEMU_CONSOLE_TYPES = ["telnet", "none"] as const;

/** Disk slots, in GNS3's order (hda → drive index 0). */
export const QEMU_DISKS = ["hda", "hdb", "hdc", "hdd"] as const;
export type QemuDisk = (typeof QEMU_DISKS)[number];

/** Properties naming a file of the image store; each has a read-only `<field>_md5sum` echo. */
export const QEMU_IMAGE_FIELDS = [
  "hda_disk_image", "hdb_disk_image", "hdc_disk_image", "hdd_disk_image", "cdrom_image", "bios_image", "initrd", "kernel_image",
] as const;
export type QemuImageField = (typeof QEMU_IMAGE_FIELDS)[number];

export const macAddressSchema = z.string().regex(MAC_PATTERN, "must be a MAC address like 0c:12:34:56:00:00");

/** An image field: "" (none) or a name relative to images/QEMU. */
const imageField = z.union([z.literal(""), imageNameSchema]);

/**
 * `qemu_path` picks the emulator binary: "" / absent (then `platform` does), a bare `qemu-system-<arch>` or
 * `qemu-kvm`, or a path ending in one. Only the basename counts: the runtime looks it up in PATH, so a client
 * can never make this server execute a file of its choosing.
 */
const QEMU_BINARY = /^(?:.*\/)?(qemu-system-[a-z0-9_]+|qemu-kvm)$/;
const qemuPathSchema = z.union([z.literal(""), z.string().regex(QEMU_BINARY, "must name a qemu-system-<arch> binary")]);

/** The settable properties, each with its rule (GNS3's names; ranges from GNS3's schemas where it has them). */
export const qemuPropertyFields = {
  qemu_path: qemuPathSchema.nullable(),
  platform: z.union([z.literal(""), z.enum(QEMU_PLATFORMS)]).nullable(), // "": none (GNS3's list has it)
  ram: z.int().min(32).max(65536),
  cpus: z.int().min(1).max(255),
  maxcpus: z.int().min(1).max(255),
  adapters: z.int().min(0).max(275),
  adapter_type: z.enum(QEMU_ADAPTER_TYPES),
  mac_address: z.union([z.literal(""), macAddressSchema]).nullable(),
  boot_priority: z.enum(QEMU_BOOT_PRIORITIES),
  hda_disk_image: imageField,
  hdb_disk_image: imageField,
  hdc_disk_image: imageField,
  hdd_disk_image: imageField,
  hda_disk_interface: z.enum(QEMU_DISK_INTERFACES),
  hdb_disk_interface: z.enum(QEMU_DISK_INTERFACES),
  hdc_disk_interface: z.enum(QEMU_DISK_INTERFACES),
  hdd_disk_interface: z.enum(QEMU_DISK_INTERFACES),
  cdrom_image: imageField,
  bios_image: imageField,
  initrd: imageField,
  kernel_image: imageField,
  kernel_command_line: z.string().max(4096).nullable(),
  options: z
    .string()
    .max(4096)
    .nullable()
    .superRefine((value, check) => {
      try {
        qemuOptionsMemoryMb(parseQemuOptions(rewriteQemuOptions(value ?? ""), PLACEHOLDER_STANDINS));
      } catch (e) {
        check.addIssue({ code: "custom", message: (e as Error).message });
      }
    }),
  linked_clone: z.boolean(),
  legacy_networking: z.boolean(),
  replicate_network_connection_state: z.boolean(),
  tpm: z.boolean(),
  uefi: z.boolean(),
  create_config_disk: z.boolean(),
  on_close: z.enum(QEMU_ON_CLOSE),
  cpu_throttling: z.int().min(0).max(800),
  process_priority: z.enum(QEMU_PROCESS_PRIORITIES),
  usage: z.string(),
};

/** Read-only keys GNS3 returns in `properties` and clients send back unchanged (the GUI does): accepted, ignored. */
const echoFields = Object.fromEntries(QEMU_IMAGE_FIELDS.map((f) => [`${f}_md5sum`, z.string().nullable()]));

/** What a create or update may carry in `properties`: known keys only, each optional. */
export const qemuPropertiesSchema = z.strictObject({ ...qemuPropertyFields, ...echoFields }).partial();
export type QemuPropertiesInput = z.input<typeof qemuPropertiesSchema>;

/** The stored properties: every settable key, defaults filled in, plus the md5 echoes. */
export type QemuProperties = {
  [K in keyof typeof qemuPropertyFields]: z.output<(typeof qemuPropertyFields)[K]>;
} & { [K in `${QemuImageField}_md5sum`]: string | null };

/** GNS3's compute defaults (compat-qemu §2); `mac_address` null means "derived from the node id" (§5, node-model/adapters.ts). */
export function qemuDefaults(): Omit<QemuProperties, `${QemuImageField}_md5sum`> {
  return {
    qemu_path: "",
    platform: null,
    ram: 256,
    cpus: 1,
    maxcpus: 1,
    adapters: 1,
    adapter_type: "e1000",
    mac_address: null,
    boot_priority: "c",
    hda_disk_image: "",
    hdb_disk_image: "",
    hdc_disk_image: "",
    hdd_disk_image: "",
    hda_disk_interface: "none",
    hdb_disk_interface: "none",
    hdc_disk_interface: "none",
    hdd_disk_interface: "none",
    cdrom_image: "",
    bios_image: "",
    initrd: "",
    kernel_image: "",
    kernel_command_line: "",
    options: "",
    linked_clone: true,
    legacy_networking: false,
    replicate_network_connection_state: true,
    tpm: false,
    uefi: false,
    create_config_disk: false,
    on_close: "power_off",
    cpu_throttling: 0,
    process_priority: "low",
    usage: "",
  };
}

/** GNS3's custom adapter entry (top-level `custom_adapters` of a node): its type and MAC reach `-device` too. */
export const qemuCustomAdapterSchema = z.strictObject({
  adapter_number: z.int().min(0).max(274),
  port_name: z.string().min(1).optional(),
  adapter_type: z.enum(QEMU_ADAPTER_TYPES).optional(),
  mac_address: macAddressSchema.optional(),
});
export const qemuCustomAdaptersSchema = z.array(qemuCustomAdapterSchema).max(275);

/** The template of a qemu node: the node settings GNS3's qemu template carries besides the properties. */
export const qemuTemplateNodeFields = {
  console_type: z.enum(QEMU_CONSOLE_TYPES),
  console_auto_start: z.boolean(),
  first_port_name: z.string(),
  port_name_format: z.string(),
  port_segment_size: z.int().min(0),
  custom_adapters: qemuCustomAdaptersSchema,
};

/**
 * GNS3's qemu template defaults: the node's, but `process_priority` "normal", `mac_address` "" (still derived per
 * node), no `platform` (GNS3's schema says "i386"; the GUI's wizard always sends the binary it picked, and an i386
 * default would boot x86_64 guests on the wrong emulator), plus the node settings.
 */
export function qemuTemplateDefaults(): Record<string, unknown> {
  const { platform: _none, usage: _usage, ...node } = qemuDefaults();
  return {
    ...node,
    mac_address: "",
    process_priority: "normal",
    console_type: "telnet",
    console_auto_start: false,
    first_port_name: "",
    port_name_format: "Ethernet{0}",
    port_segment_size: 0,
    custom_adapters: [],
  };
}

// ------------------------------------------------------------------ options (compat-qemu §2, refused options: docs/gns3-compat.md)

/**
 * The options checked with the node's own placeholder values (the schema only sees stand-ins): where a qemu node
 * is created, renamed or given options, with its final name. 400 "options: Forbidden additional option: …".
 */
export function checkQemuNodeOptions(node: QemuOptionNode, options: string | null | undefined): void {
  try {
    qemuOptionsMemoryMb(parseQemuOptions(options, node));
  } catch (e) {
    throw e instanceof ForbiddenQemuOption ? new ForbiddenQemuOption(`options: ${e.message}`) : e;
  }
}

// ------------------------------------------------------------------ reading and normalising

/**
 * A node's properties as stored, completed with the defaults: what the runtime reads (a node imported from a
 * .gns3 file may lack keys or carry GNS3's absolute image paths; those are not trusted here, the runtime resolves
 * every image through the image store at start).
 */
export function readQemuProperties(stored: Record<string, unknown>): QemuProperties {
  const echoes = Object.fromEntries(QEMU_IMAGE_FIELDS.map((f) => [`${f}_md5sum`, null]));
  return { ...qemuDefaults(), ...echoes, ...stored } as QemuProperties;
}

/**
 * Validates a complete set of properties (current ones with a client's changes merged in) and normalises it: the
 * md5 echoes dropped (the caller computes them from the store), options rewritten as GNS3 does and checked,
 * `mac_address` "" or null → the node's base MAC.
 */
export function normalizeQemuProperties(nodeId: string, merged: Record<string, unknown>): Omit<QemuProperties, `${QemuImageField}_md5sum`> {
  const input: Record<string, unknown> = { ...parseInput(qemuPropertiesSchema, merged) };
  for (const f of QEMU_IMAGE_FIELDS) delete input[`${f}_md5sum`];
  const props = { ...qemuDefaults(), ...input } as ReturnType<typeof qemuDefaults>;
  props.options = rewriteQemuOptions(props.options ?? "");
  if (!props.mac_address) props.mac_address = qemuBaseMac(nodeId);
  return props;
}

/** `qemu-system-<platform>` from `qemu_path`'s basename or `platform`; null when neither is set (GNS3: "qemu-system-None"). */
export function qemuBinaryName(props: Pick<QemuProperties, "qemu_path" | "platform">): string | null {
  const fromPath = props.qemu_path ? QEMU_BINARY.exec(props.qemu_path)?.[1] : undefined;
  return fromPath ?? (props.platform ? `qemu-system-${props.platform}` : null);
}

// ------------------------------------------------------------------ with the image store

/**
 * The properties to store for a qemu node: `merged` (current properties with the client's changes, or a new
 * node's) validated and normalised, each image named in `changed` (all of them for a new node) proven to exist in
 * the local image store (GNS3: 409 "The image <name> is missing", nothing written), and the md5 echoes computed
 * (never taken from the client).
 * A node on a remote compute has its images there: that compute checks them when the node is placed.
 */
export async function prepareQemuProperties(
  ctx: Pick<AppContext, "config">,
  node: { id: string; computeId: string },
  merged: Record<string, unknown>,
  changed: readonly string[] | "all",
): Promise<QemuProperties> {
  const props = normalizeQemuProperties(node.id, merged);
  const echoes: Record<string, string | null> = {};
  for (const field of QEMU_IMAGE_FIELDS) {
    const name = props[field];
    if (!name || node.computeId !== LOCAL_ID) {
      echoes[`${field}_md5sum`] = null;
      continue;
    }
    const mustExist = changed === "all" || changed.includes(field);
    const file = await resolveImage(ctx, name).catch((e: unknown) => {
      if (mustExist || !(e instanceof ImageMissingError)) throw e;
      return null;
    });
    echoes[`${field}_md5sum`] = file ? await imageMd5(file) : null; // an image gone since it was set: md5 unknown
  }
  return { ...props, ...echoes } as QemuProperties;
}
