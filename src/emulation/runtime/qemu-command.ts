import { nodeAdapter, type CustomAdapter } from "../node-model/adapters.js";
import type { QemuProperties } from "../node-model/qemu-properties.js";

/**
 * The qemu command line of a node, in GNS3's order (compat-qemu §3): name, memory, CPUs, acceleration, boot
 * order, firmware, CD-ROM, disks, kernel, uuid, serial console, monitor, NICs, display, then the node's options.
 * Pure: every path in it was resolved by the caller (images from the image store, overlays in the node dir).
 */
export interface QemuNic {
  /** UDP port QEMU receives on (the attachment's nodeLocal). */
  local: number;
  /** UDP port QEMU sends to (the attachment's peer, where the link relay listens). */
  remote: number;
}

export interface QemuLaunch {
  nodeId: string;
  name: string;
  properties: QemuProperties;
  /** The node's options: placeholders expanded, then checked (qemu-launch.ts). */
  options: string[];
  customAdapters: CustomAdapter[];
  /** hda…hdd → the file to boot (overlay or base). */
  disks: Partial<Record<"hda" | "hdb" | "hdc" | "hdd", { file: string; interface: string }>>;
  cdrom?: string;
  bios?: string;
  kernel?: string;
  initrd?: string;
  /** Serial console as telnet on host:port, or none. */
  console?: { host: string; port: number };
  qmpSocket: string;
  nics: QemuNic[];
  /** "kvm" or "tcg"; ignored when the options choose the accelerator themselves. */
  accel: "kvm" | "tcg";
}

/** Adapters beyond this many go behind PCI bridges (bus 0 has 32 slots, some taken by the machine's own devices). */
const NICS_ON_BUS0 = 16;
const NICS_PER_BRIDGE = 31;

/** QEMU's option syntax escapes a comma in a value by doubling it. */
const commaSafe = (s: string) => s.replaceAll(",", ",,");

/** Whether the options pick the accelerator themselves (`-accel`, `-machine accel=`, `-enable-kvm`). */
function choosesAccel(options: string[]): boolean {
  return options.some((w, i) => w === "-accel" || w === "-enable-kvm" || ((w === "-machine" || w === "-M") && /(^|,)accel=/.test(options[i + 1] ?? "")));
}

function diskArgs(index: number, file: string, iface: string): string[] {
  const id = `drive${index}`;
  const f = commaSafe(file);
  switch (iface) {
    case "sata": // QEMU has no if=sata: an AHCI controller per disk, as GNS3 does
      return ["-device", `ahci,id=ahci${index}`, "-drive", `file=${f},if=none,id=${id},index=${index},media=disk`, "-device", `ide-hd,drive=${id},bus=ahci${index}.0,id=${id}-dev`];
    case "nvme":
      return ["-drive", `file=${f},if=none,id=${id},index=${index},media=disk`, "-device", `nvme,drive=${id},serial=${index}`];
    default:
      // "none" is GNS3's default and means the machine's own controller: IDE on a pc.
      return ["-drive", `file=${f},if=${iface === "none" ? "ide" : iface},index=${index},media=disk,id=${id}`];
  }
}

function nicArgs(l: QemuLaunch): string[] {
  const node = { id: l.nodeId, nodeType: "qemu", properties: l.properties };
  const out: string[] = [];
  const bridges = Math.ceil(Math.max(0, l.nics.length - NICS_ON_BUS0) / NICS_PER_BRIDGE);
  for (let b = 1; b <= bridges; b++) out.push("-device", `pci-bridge,id=pci-bridge${b},chassis_nr=${b}`);
  l.nics.forEach((nic, n) => {
    // The node's ports show the same type and MAC (adapters.ts).
    const { adapterType, macAddress } = nodeAdapter(node, l.customAdapters, n);
    const driver = adapterType === "virtio" ? "virtio-net-pci" : adapterType;
    let device = `${driver},mac=${macAddress}`;
    if (driver === "virtio-net-pci") device += ",speed=10000,duplex=full";
    if (n >= NICS_ON_BUS0) {
      const k = n - NICS_ON_BUS0;
      device += `,bus=pci-bridge${Math.floor(k / NICS_PER_BRIDGE) + 1},addr=0x${((k % NICS_PER_BRIDGE) + 1).toString(16)}`;
    }
    out.push("-device", `${device},netdev=gns3-${n}`);
    out.push("-netdev", `socket,id=gns3-${n},udp=127.0.0.1:${nic.remote},localaddr=127.0.0.1:${nic.local}`);
  });
  return out;
}

/** argv (without the binary). */
export function qemuArgs(l: QemuLaunch): string[] {
  const { properties: p, options } = l;
  const args = ["-name", commaSafe(l.name), "-m", `${p.ram}M`];
  args.push("-smp", `cpus=${p.cpus}${p.maxcpus > p.cpus ? `,maxcpus=${p.maxcpus}` : ""},sockets=1`);
  if (!choosesAccel(options)) args.push("-accel", l.accel);
  args.push("-boot", `order=${p.boot_priority}`);
  if (l.bios) args.push("-bios", l.bios);
  if (l.cdrom) args.push("-cdrom", l.cdrom);
  (["hda", "hdb", "hdc", "hdd"] as const).forEach((d, i) => {
    const disk = l.disks[d];
    if (disk) args.push(...diskArgs(i, disk.file, disk.interface));
  });
  if (l.initrd) args.push("-initrd", l.initrd);
  if (l.kernel) args.push("-kernel", l.kernel);
  if (l.kernel && p.kernel_command_line) args.push("-append", p.kernel_command_line);
  if (!options.includes("-uuid")) args.push("-uuid", l.nodeId);
  const consoleHost = l.console?.host.includes(":") ? `[${l.console.host}]` : l.console?.host; // IPv6 in QEMU's inet syntax
  args.push("-serial", l.console ? `telnet:${consoleHost}:${l.console.port},server,nowait` : "none");
  args.push("-qmp", `unix:${commaSafe(l.qmpSocket)},server,nowait`);
  args.push("-net", "none", ...nicArgs(l));
  if (!options.includes("-display") && !options.includes("-nographic")) args.push("-display", "none");
  // QEMU's own seccomp filter, under the confinement: no exec, no setuid, no scheduler or resource changes.
  args.push("-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
  return [...args, ...options];
}
