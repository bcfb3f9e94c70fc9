import { builder } from "../../platform/graphql/builder.js";
import { enumValues } from "./graphql.js"; // and the EmulatedNode type this file extends
import { QEMU_DISKS, QEMU_ON_CLOSE, readQemuProperties, type QemuDisk, type QemuProperties } from "../node-model/qemu-properties.js";
import { nodeProperties } from "../node-model/serialize.js";

/**
 * A qemu node's settings as typed fields (`EmulatedNode.qemu`), read from the same stored properties the JSON
 * `properties` field shows; they are set through `properties` like every node type's.
 */
const QemuDiskSlotEnum = builder.enumType("QemuDiskSlot", { values: enumValues(QEMU_DISKS) });
const QemuOnCloseEnum = builder.enumType("QemuOnClose", { values: enumValues(QEMU_ON_CLOSE) });

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
  fields: (t) => ({ name: t.exposeString("name"), md5sum: t.exposeString("md5sum", { nullable: true }) }),
});

const QemuDiskRef = builder.objectRef<DiskRef>("QemuDisk").implement({
  description: "A disk of a qemu node (run as a linked clone when linkedClone is set)",
  fields: (t) => ({
    slot: t.field({ type: QemuDiskSlotEnum, resolve: (d) => d.slot }),
    name: t.exposeString("name"),
    md5sum: t.exposeString("md5sum", { nullable: true }),
    interface: t.exposeString("interface", { description: "ide, sata, virtio … or none (chosen by the server)" }),
  }),
});

const image = (p: QemuProperties, field: "cdrom_image" | "bios_image" | "initrd" | "kernel_image"): ImageRef | null =>
  p[field] ? { name: p[field], md5sum: p[`${field}_md5sum`] } : null;

const QemuSettingsRef = builder.objectRef<QemuProperties>("QemuSettings").implement({
  description: "The settings of a qemu node (GNS3's qemu properties)",
  fields: (t) => ({
    qemuPath: t.string({ nullable: true, resolve: (p) => p.qemu_path || null }),
    platform: t.string({ nullable: true, resolve: (p) => p.platform || null }),
    ram: t.int({ description: "MB", resolve: (p) => p.ram }),
    cpus: t.int({ resolve: (p) => p.cpus }),
    adapters: t.int({ resolve: (p) => p.adapters }),
    adapterType: t.string({ resolve: (p) => p.adapter_type }),
    macAddress: t.string({ nullable: true, description: "The base MAC: adapter n uses it plus n", resolve: (p) => p.mac_address || null }),
    bootPriority: t.string({ resolve: (p) => p.boot_priority }),
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
    cdromImage: t.field({ type: QemuImageRef, nullable: true, resolve: (p) => image(p, "cdrom_image") }),
    biosImage: t.field({ type: QemuImageRef, nullable: true, resolve: (p) => image(p, "bios_image") }),
    kernelImage: t.field({ type: QemuImageRef, nullable: true, resolve: (p) => image(p, "kernel_image") }),
    initrd: t.field({ type: QemuImageRef, nullable: true, resolve: (p) => image(p, "initrd") }),
    kernelCommandLine: t.string({ resolve: (p) => p.kernel_command_line ?? "" }),
    options: t.string({ resolve: (p) => p.options ?? "" }),
    linkedClone: t.boolean({ resolve: (p) => p.linked_clone }),
    onClose: t.field({ type: QemuOnCloseEnum, resolve: (p) => p.on_close }),
    processPriority: t.string({ resolve: (p) => p.process_priority }),
    cpuThrottling: t.int({ description: "Percent of a CPU; 0 = no limit", resolve: (p) => p.cpu_throttling }),
    replicateNetworkConnectionState: t.boolean({ resolve: (p) => p.replicate_network_connection_state }),
    legacyNetworking: t.boolean({ resolve: (p) => p.legacy_networking }),
    tpm: t.boolean({ resolve: (p) => p.tpm }),
    uefi: t.boolean({ resolve: (p) => p.uefi }),
    usage: t.string({ resolve: (p) => p.usage }),
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
