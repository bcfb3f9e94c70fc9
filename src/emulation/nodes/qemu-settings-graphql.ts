import { builder, enumValues } from "../../platform/graphql/builder.js";
import { QEMU_DISKS, QEMU_ON_CLOSE, readQemuProperties, type QemuDisk, type QemuProperties } from "../node-model/qemu-properties.js";
import { gns3Names, type SettingsKind } from "./settings-kind.js";

/**
 * A qemu node's settings as typed fields (a member of `NodeSettings`), read from its stored properties, and the
 * input that sets them (`NodeSettingsInput.qemu`), named onto GNS3's qemu properties.
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
    ramMb: t.int({ description: "Guest memory, in MB", resolve: (p) => p.ram }),
    cpus: t.int({ description: "Virtual CPUs of the guest at boot", resolve: (p) => p.cpus }),
    maxCpus: t.int({ description: "The most virtual CPUs the guest can have (hot-plugged beyond `cpus`)", resolve: (p) => p.maxcpus }),
    adapters: t.int({ description: "Network adapters of the guest (its ports)", resolve: (p) => p.adapters }),
    adapterType: t.string({ description: "The emulated network card (e1000, virtio-net-pci …)", resolve: (p) => p.adapter_type }),
    macAddress: t.string({ nullable: true, description: "The base MAC: adapter n uses it plus n (null on a template: each node derives its own from its id)", resolve: (p) => p.mac_address || null }),
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
    cpuThrottlingPercent: t.int({ description: "The share of one host CPU the VM may use, in percent; 0: no limit", resolve: (p) => p.cpu_throttling }),
    replicateNetworkConnectionState: t.boolean({ description: "Whether a suspended or unplugged link shows in the guest as a cable pulled out", resolve: (p) => p.replicate_network_connection_state }),
    legacyNetworking: t.boolean({ description: "Whether the VM uses QEMU's old -net options (for old QEMU versions)", resolve: (p) => p.legacy_networking }),
    tpm: t.boolean({ description: "Whether the VM has an emulated TPM (trusted platform module)", resolve: (p) => p.tpm }),
    uefi: t.boolean({ description: "Whether the VM boots with UEFI firmware instead of a BIOS", resolve: (p) => p.uefi }),
    createConfigDisk: t.boolean({ description: "Whether the VM gets a small extra disk holding its configuration files", resolve: (p) => p.create_config_disk }),
    usage: t.string({ description: "Free text on how to use the VM (credentials, first steps), shown to lab users", resolve: (p) => p.usage }),
  }),
});

const QemuDiskInput = builder.inputType("QemuDiskInput", {
  description: "One disk slot of a QEMU VM: what is not given keeps its current value",
  fields: (t) => ({
    slot: t.field({ type: QemuDiskSlotEnum, required: true, description: "The slot the disk is in" }),
    image: t.string({ description: "The disk image's file name in the image store (empty: no disk in the slot)" }),
    interface: t.string({ description: "How the guest sees the disk: ide, sata, nvme, scsi, sd, mtd, floppy, pflash, virtio or none (none: the server chooses)" }),
  }),
});

const QemuSettingsInput = builder.inputType("QemuSettingsInput", {
  description: "Settings of a qemu node; on a change only the fields given change",
  fields: (t) => ({
    qemuPath: t.string({ description: "The QEMU binary that runs the VM: qemu-system-<arch> or qemu-kvm (empty: chosen from the platform)" }),
    platform: t.string({ description: "The emulated CPU architecture (x86_64, i386, aarch64 …)" }),
    ramMb: t.int({ description: "Guest memory, in MB (32 to 65536)" }),
    cpus: t.int({ description: "Virtual CPUs of the guest at boot" }),
    maxCpus: t.int({ description: "The most virtual CPUs the guest can have" }),
    adapters: t.int({ description: "Network adapters of the guest (its ports)" }),
    adapterType: t.string({ description: "The emulated network card (e1000, virtio-net-pci …)" }),
    macAddress: t.string({ description: "The base MAC: adapter n uses it plus n (empty: derived from the node's id)" }),
    bootPriority: t.string({ description: "Boot order: c (disk), d (CD-ROM), n (network) or a combination such as cd" }),
    disks: t.field({ type: [QemuDiskInput], description: "Disk slots to change; the slots not listed keep their disks" }),
    cdromImage: t.string({ description: "The ISO image in the CD-ROM drive, by its name in the image store (empty: none)" }),
    biosImage: t.string({ description: "A BIOS image replacing QEMU's own, by its name in the image store (empty: none)" }),
    kernelImage: t.string({ description: "A Linux kernel booted directly, by its name in the image store (empty: none)" }),
    initrd: t.string({ description: "The initial RAM disk booted with `kernelImage`, by its name in the image store (empty: none)" }),
    kernelCommandLine: t.string({ description: "The command line given to `kernelImage`" }),
    options: t.string({ description: "Extra QEMU command-line options (options that reach host files or devices are refused)" }),
    linkedClone: t.boolean({ description: "Whether the VM writes to its own copy-on-write overlay instead of the shared disk images" }),
    onClose: t.field({ type: QemuOnCloseEnum, description: "What happens to the VM when it is stopped or its project closed" }),
    processPriority: t.string({ description: "The host scheduling priority of the QEMU process: realtime, very high, high, normal, low or very low" }),
    cpuThrottlingPercent: t.int({ description: "The share of one host CPU the VM may use, in percent (0 to 800; 0: no limit)" }),
    replicateNetworkConnectionState: t.boolean({ description: "Whether a suspended or unplugged link shows in the guest as a cable pulled out" }),
    legacyNetworking: t.boolean({ description: "Whether the VM uses QEMU's old -net options (for old QEMU versions)" }),
    tpm: t.boolean({ description: "Whether the VM has an emulated TPM (trusted platform module)" }),
    uefi: t.boolean({ description: "Whether the VM boots with UEFI firmware instead of a BIOS" }),
    createConfigDisk: t.boolean({ description: "Whether the VM gets a small extra disk holding its configuration files" }),
    usage: t.string({ description: "Free text on how to use the VM (credentials, first steps), shown to lab users" }),
  }),
});

/** Input fields whose GNS3 qemu property is not their snake_case name (the disks are spread over their slots' properties). */
const QEMU_RENAMES = { ramMb: "ram", maxCpus: "maxcpus", cpuThrottlingPercent: "cpu_throttling" };

type QemuInput = typeof QemuSettingsInput.$inferInput;
const diskProperties = (disks: QemuInput["disks"]) =>
  Object.fromEntries(
    (disks ?? []).flatMap((d) => [
      ...(d.image != null ? [[`${d.slot}_disk_image`, d.image]] : []),
      ...(d.interface != null ? [[`${d.slot}_disk_interface`, d.interface]] : []),
    ]),
  );

export const qemuSettings: SettingsKind<QemuProperties, QemuInput> = {
  member: "qemu",
  shown: QemuSettingsRef,
  read: (properties) => readQemuProperties(properties),
  given: QemuSettingsInput,
  toProperties: ({ disks, ...fields }) => ({ ...gns3Names(fields, QEMU_RENAMES), ...diskProperties(disks) }),
};
