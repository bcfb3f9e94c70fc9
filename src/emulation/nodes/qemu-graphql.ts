import { builder, enumValues } from "../../platform/graphql/builder.js";
import "./graphql.js"; // the EmulatedNode type this file extends
import { QEMU_DISKS, QEMU_ON_CLOSE, readQemuProperties, type QemuDisk, type QemuProperties } from "../node-model/qemu-properties.js";
import { nodeProperties } from "../node-model/serialize.js";

/**
 * A qemu node's settings as typed fields (`EmulatedNode.qemu`), read from the same stored properties the JSON
 * `properties` field shows; they are set through `properties` like every node type's.
 */
const QemuDiskSlotEnum = builder.enumType("QemuDiskSlot", {
  description: "The four disk slots of a QEMU VM, as the guest sees them",
  values: enumValues(QEMU_DISKS, { hda: "The first disk (the boot disk, usually)", hdb: "The second disk", hdc: "The third disk", hdd: "The fourth disk" }),
});
const QemuOnCloseEnum = builder.enumType("QemuOnClose", {
  description: "What happens to a QEMU VM when it is stopped or its project closed",
  values: enumValues(QEMU_ON_CLOSE, {
    power_off: "Cut the power at once (the guest may lose unsaved data)",
    shutdown_signal: "Ask the guest to shut down (ACPI), as a power button would",
    save_vm_state: "Save the VM's running state and restore it on the next start",
  }),
});

interface ImageRef {
  name: string;
  md5sum: string | null;
}
interface DiskRef extends ImageRef {
  slot: QemuDisk;
  interface: string;
}

const QemuImageRef = builder.objectRef<ImageRef>("QemuImage").implement({
  description: "An image a qemu node uses: its name in the image store and the md5 of the file",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The image's file name in the image store" }),
    md5sum: t.exposeString("md5sum", { nullable: true, description: "The MD5 checksum of the image file (null until computed)" }),
  }),
});

const QemuDiskRef = builder.objectRef<DiskRef>("QemuDisk").implement({
  description: "A disk of a qemu node (run as a linked clone when linkedClone is set)",
  fields: (t) => ({
    slot: t.field({ type: QemuDiskSlotEnum, description: "The slot the disk is in", resolve: (d) => d.slot }),
    name: t.exposeString("name", { description: "The disk image's file name in the image store" }),
    md5sum: t.exposeString("md5sum", { nullable: true, description: "The MD5 checksum of the image file (null until computed)" }),
    interface: t.exposeString("interface", { description: "ide, sata, virtio … or none (chosen by the server)" }),
  }),
});

const image = (p: QemuProperties, field: "cdrom_image" | "bios_image" | "initrd" | "kernel_image"): ImageRef | null =>
  p[field] ? { name: p[field], md5sum: p[`${field}_md5sum`] } : null;

const QemuSettingsRef = builder.objectRef<QemuProperties>("QemuSettings").implement({
  description: "The settings of a qemu node (GNS3's qemu properties)",
  fields: (t) => ({
    qemuPath: t.string({ nullable: true, description: "The QEMU binary that runs the VM (null: chosen from the platform)", resolve: (p) => p.qemu_path || null }),
    platform: t.string({ nullable: true, description: "The emulated CPU architecture (x86_64, i386, aarch64 …)", resolve: (p) => p.platform || null }),
    ram: t.int({ description: "Guest memory, in MB", resolve: (p) => p.ram }),
    cpus: t.int({ description: "Virtual CPUs of the guest", resolve: (p) => p.cpus }),
    adapters: t.int({ description: "Network adapters of the guest (its ports)", resolve: (p) => p.adapters }),
    adapterType: t.string({ description: "The emulated network card (e1000, virtio-net-pci …)", resolve: (p) => p.adapter_type }),
    macAddress: t.string({ nullable: true, description: "The base MAC: adapter n uses it plus n", resolve: (p) => p.mac_address || null }),
    bootPriority: t.string({ description: "Boot order: c (disk), d (CD-ROM), n (network) or a combination such as cd", resolve: (p) => p.boot_priority }),
    disks: t.field({
      type: [QemuDiskRef],
      description: "The disk slots that have an image",
      resolve: (p) =>
        QEMU_DISKS.filter((d) => p[`${d}_disk_image`]).map((d) => ({
          slot: d,
          name: p[`${d}_disk_image`],
          md5sum: p[`${d}_disk_image_md5sum`],
          interface: p[`${d}_disk_interface`],
        })),
    }),
    cdromImage: t.field({ type: QemuImageRef, nullable: true, description: "The ISO image in the VM's CD-ROM drive", resolve: (p) => image(p, "cdrom_image") }),
    biosImage: t.field({ type: QemuImageRef, nullable: true, description: "A BIOS image replacing QEMU's own", resolve: (p) => image(p, "bios_image") }),
    kernelImage: t.field({ type: QemuImageRef, nullable: true, description: "A Linux kernel booted directly (without a boot loader)", resolve: (p) => image(p, "kernel_image") }),
    initrd: t.field({ type: QemuImageRef, nullable: true, description: "The initial RAM disk booted with `kernelImage`", resolve: (p) => image(p, "initrd") }),
    kernelCommandLine: t.string({ description: "The command line given to `kernelImage` (empty without one)", resolve: (p) => p.kernel_command_line ?? "" }),
    options: t.string({ description: "Extra QEMU command-line options", resolve: (p) => p.options ?? "" }),
    linkedClone: t.boolean({ description: "Whether the VM writes to its own copy-on-write overlay instead of the shared disk images", resolve: (p) => p.linked_clone }),
    onClose: t.field({ type: QemuOnCloseEnum, description: "What happens to the VM when it is stopped or its project closed", resolve: (p) => p.on_close }),
    processPriority: t.string({ description: "The host scheduling priority of the QEMU process (realtime … very low)", resolve: (p) => p.process_priority }),
    cpuThrottling: t.int({ description: "Percent of a CPU; 0 = no limit", resolve: (p) => p.cpu_throttling }),
    replicateNetworkConnectionState: t.boolean({ description: "Whether a suspended or unplugged link shows in the guest as a cable pulled out", resolve: (p) => p.replicate_network_connection_state }),
    legacyNetworking: t.boolean({ description: "Whether the VM uses QEMU's old -net options (for old QEMU versions)", resolve: (p) => p.legacy_networking }),
    tpm: t.boolean({ description: "Whether the VM has an emulated TPM (trusted platform module)", resolve: (p) => p.tpm }),
    uefi: t.boolean({ description: "Whether the VM boots with UEFI firmware instead of a BIOS", resolve: (p) => p.uefi }),
    usage: t.string({ description: "Free text on how to use the VM (credentials, first steps), shown to lab users", resolve: (p) => p.usage }),
  }),
});

builder.prismaObjectFields("Node", (t) => ({
  qemu: t.field({
    type: QemuSettingsRef,
    nullable: true,
    description: "The qemu settings, typed (null for other node types)",
    select: { nodeType: true, propertiesJson: true },
    resolve: (n) => (n.nodeType === "qemu" ? readQemuProperties(nodeProperties(n)) : null),
  }),
}));
