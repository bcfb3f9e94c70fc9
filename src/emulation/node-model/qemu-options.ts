import { InvalidInputError } from "../../platform/core/errors.js";

/**
 * A qemu node's extra `options` (compat-qemu §2; refused options: docs/gns3-compat.md): split as GNS3 splits them,
 * placeholders expanded with the node's own values, then every word checked the way QEMU will read it. The check
 * always runs on the expanded words, so a placeholder's value (a node name like `/some/dir/f` or `a,driver=x`)
 * meets the same rules as anything typed into the options.
 */

/** GNS3 rewrites these on set (observed): the acceleration switches become `-machine accel=…`. */
const REWRITES: [RegExp, string][] = [
  [/(^|\s)-no-kvm(?=\s|$)/g, "$1-machine accel=tcg"],
  [/(^|\s)-no-hax(?=\s|$)/g, "$1-machine accel=tcg"],
  [/(^|\s)-enable-kvm(?=\s|$)/g, "$1-machine accel=kvm"],
];
export function rewriteQemuOptions(options: string): string {
  return REWRITES.reduce((s, [re, to]) => s.replace(re, to), options);
}

/** Thrown for an option this server refuses; the message is GNS3's ("Forbidden additional option: -netdev"). */
export class ForbiddenQemuOption extends InvalidInputError {}

/** What GNS3's placeholders stand for in one node's options. */
export interface QemuOptionNode {
  id: string;
  name: string;
  projectId: string;
  console: number | null;
}

/** For options with no node yet (a template's): values with the shape of real ones. */
export const PLACEHOLDER_STANDINS: QemuOptionNode = {
  id: "00000000-0000-0000-0000-000000000000",
  name: "VM",
  projectId: "00000000-0000-0000-0000-000000000000",
  console: 5000,
};

/**
 * GNS3's placeholders. `%guest-cid%` is the console port (GNS3 hands out a vsock CID per node; the console port is
 * unique per compute too). `%project-path%` is not offered: options never name a host directory.
 */
function expandPlaceholders(word: string, node: QemuOptionNode): string {
  if (word.includes("%project-path%")) throw new ForbiddenQemuOption(`Forbidden additional option: ${word} (%project-path% is not available)`);
  const port = String(node.console ?? 0);
  return word
    .replaceAll("%vm-name%", node.name)
    .replaceAll("%vm-id%", node.id)
    .replaceAll("%project-id%", node.projectId)
    .replaceAll("%console-port%", port)
    .replaceAll("%guest-cid%", port);
}

/**
 * Python's shlex.split (POSIX mode, no comments), which GNS3 applies to `options`: whitespace separates words,
 * single quotes are literal, double quotes keep spaces and honour \\ \" \$ \`, a backslash outside quotes escapes.
 */
export function splitQemuOptions(options: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < options.length; i++) {
    const c = options[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && i + 1 < options.length && '\\"$`\n'.includes(options[i + 1])) word += options[++i];
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\") {
      if (i + 1 >= options.length) throw new InvalidInputError("No escaped character");
      word = (word ?? "") + options[++i];
    } else word = (word ?? "") + c;
  }
  if (quote) throw new InvalidInputError("No closing quotation");
  if (word !== null) words.push(word);
  return words;
}

export interface SubOption {
  key: string;
  value: string;
}

/**
 * QEMU's sub-option syntax (QemuOpts `opts_do_parse`, and keyval, which `-object`/`-machine` use and which splits
 * the same way): parts separated by `,`, where `,,` is a literal comma inside a value; a first part without `=` is
 * the value of the implied key (`-device e1000` → driver=e1000); a later bare `flag` is flag=on and `noflag`
 * flag=off. Every part is returned, repeated keys included (QEMU keeps the last one).
 */
export function parseQemuOpts(arg: string, impliedKey?: string): SubOption[] {
  const parts: SubOption[] = [];
  const readValue = (from: number): [string, number] => {
    let value = "";
    let i = from;
    for (; i < arg.length; i++) {
      if (arg[i] === ",") {
        if (arg[i + 1] !== ",") break;
        i++;
      }
      value += arg[i];
    }
    return [value, i + 1]; // past the separating comma
  };
  for (let i = 0; i < arg.length; ) {
    const end = i + strcspn(arg.slice(i), "=,");
    let part: SubOption;
    if (arg[end] === "=") {
      const [value, next] = readValue(end + 1);
      part = { key: arg.slice(i, end), value };
      i = next;
    } else if (parts.length === 0 && impliedKey) {
      const [value, next] = readValue(i);
      part = { key: impliedKey, value };
      i = next;
    } else {
      const flag = arg.slice(i, end);
      part = flag.startsWith("no") ? { key: flag.slice(2), value: "off" } : { key: flag, value: "on" };
      i = end + 1;
    }
    parts.push(part);
  }
  return parts;
}

const strcspn = (s: string, reject: string) => {
  const i = [...s].findIndex((c) => reject.includes(c));
  return i < 0 ? s.length : i;
};

/**
 * `-global driver.property=value` (QEMU's `qemu_global_option`: the value is the rest, commas and all), or the
 * QemuOpts form `driver=…,property=…,value=…` (the last of each counts): as the driver and `property=value`, so
 * the property meets the rules of a sub-option key.
 */
function parseGlobal(arg: string): SubOption[] {
  const m = /^([^.=]{1,63})\.([^=]{1,63})=/.exec(arg);
  if (m) return [{ key: "driver", value: m[1] }, { key: m[2], value: arg.slice(m[0].length) }];
  const parts = parseQemuOpts(arg);
  const last = (key: string) => parts.findLast((p) => p.key === key)?.value ?? "";
  return [{ key: "driver", value: last("driver") }, { key: last("property"), value: last("value") }];
}

/** Sub-option keys that name host files, sockets, programs or devices, wherever they appear (`-device x,romfile=`…). */
const HOST_KEYS = new Set([
  "file", "filename", "path", "romfile", "dir", "mem-path", "script", "downscript", "splash", "sock", "socket", "chardev",
  "fsdev", "host", "hostbus", "hostaddr", "hostport", "hostdevice", "sysfsdev", "vhostfd", "fd", "fds", "tls-creds",
  "tls-authz", "x509-dir", "dtb", "mount_tag", "logfile", "keyfile", "certfile", "rootdir", "kernel", "initrd",
  "firmware", "dumpdtb", "server",
]);
const hostKey = (key: string) => HOST_KEYS.has(key.split(".").pop()!.trim().toLowerCase());

/**
 * `-device` drivers a lab needs: NICs, disk and USB controllers, input, RNG, watchdogs, bridges, displays. Everything
 * else is refused — QEMU has hundreds of devices and several hand the guest a host file, directory, socket or
 * device (usb-mtp, guest-loader, loader, vhost-*, vfio-*, virtio-9p, usb-host, …); a deny-list cannot keep up.
 * Disks only reach drives this server defines (`-drive` is refused).
 */
const DEVICE_DRIVERS = new Set([
  // NICs (the adapter types, plus the virtio-mmio one)
  "e1000", "e1000-82544gc", "e1000-82545em", "e1000e", "i82550", "i82551", "i82557a", "i82557b", "i82557c", "i82558a",
  "i82558b", "i82559a", "i82559b", "i82559c", "i82559er", "i82562", "i82801", "ne2k_pci", "pcnet", "rocker", "rtl8139",
  "virtio-net-pci", "virtio-net-device", "vmxnet3",
  // disk controllers and disks on this server's drives
  "ahci", "ich9-ahci", "piix3-ide", "piix4-ide", "ide-hd", "ide-cd", "lsi53c895a", "lsi53c810", "megasas", "megasas-gen2",
  "mptsas1068", "am53c974", "dc390", "pvscsi", "virtio-scsi-pci", "virtio-scsi-device", "scsi-hd", "scsi-cd", "virtio-blk-pci",
  "virtio-blk-device", "usb-storage",
  // USB
  "piix3-usb-uhci", "piix4-usb-uhci", "ich9-usb-uhci1", "ich9-usb-uhci2", "ich9-usb-uhci3", "ich9-usb-ehci1", "ich9-usb-ehci2",
  "usb-ehci", "nec-usb-xhci", "qemu-xhci", "pci-ohci", "usb-tablet", "usb-mouse", "usb-kbd", "usb-hub",
  // input, entropy (with rng-builtin), watchdogs, guest helpers
  "virtio-keyboard-pci", "virtio-mouse-pci", "virtio-tablet-pci", "virtio-rng-pci", "virtio-rng-device", "virtio-balloon-pci",
  "i6300esb", "ib700", "pvpanic", "vmcoreinfo", "sga",
  // PCI topology
  "pci-bridge", "pcie-root-port", "pcie-pci-bridge", "ioh3420", "x3130-upstream", "xio3130-downstream", "i82801b11-bridge",
  // displays (their video memory counts towards the RAM cap)
  "VGA", "cirrus-vga", "vmware-svga",
]);

/** Display devices and their video memory (MB) when `vgamem_mb` is not given: QEMU allows many, each up to 256 MB. */
const DISPLAY_VRAM_MB: Record<string, number> = { VGA: 16, "cirrus-vga": 4, "vmware-svga": 16 };

/** `-object` types a lab needs; memory backends count towards the RAM cap (`qemuOptionsMemoryMb`). */
const OBJECT_TYPES = new Set(["memory-backend-ram", "rng-builtin", "iothread"]);

/**
 * `-machine` keys (`qemu-system-x86_64 -machine pc,help`, QEMU 7.2, and the legacy accelerator keys) that change
 * emulated hardware only: not `kernel`/`initrd`/`firmware`/`dtb`/`dumpdtb`/`append` (files), not
 * `memory`/`memory-backend` (RAM the cap would not see), not `confidential-guest-support`/`memory-encryption`.
 */
const MACHINE_KEYS = new Set([
  "type", "accel", "kernel-irqchip", "kvm-shadow-mem", "usb", "smm", "vmport", "dump-guest-core", "mem-merge", "graphics",
  "hpet", "sata", "smbus", "pit", "pic", "acpi", "i8042", "max-ram-below-4g", "suppress-vmdesc", "smbios-entry-point-type",
  "default-bus-bypass-iommu", "phandle-start", "dt-compatible", "x-oem-id", "x-oem-table-id", "bus-lock-ratelimit",
  // arm/aarch64 virt
  "gic-version", "highmem", "secure", "virtualization", "its", "iommu", "ras", "mte",
]);

type Check = (parts: SubOption[]) => boolean;
const keysIn = (allowed: string[]): Check => (parts) => parts.every((p) => allowed.includes(p.key));
const valuesIn = (key: string, allowed: Set<string>): Check => (parts) => parts.every((p) => p.key !== key || allowed.has(p.value));
const oneOf = (...words: string[]): Check => (parts) => parts.length === 1 && words.includes(parts[0].value);

interface OptionRule {
  /** How QEMU reads the argument: its sub-option syntax with the implied first key, `-global`'s, or a plain word. */
  syntax?: { implied?: string } | "global" | "plain";
  check?: Check;
}

/**
 * The options a client may add (those without a rule take no argument). Everything else is refused: QEMU has many
 * ways to reach the host (files: -drive -kernel -readconfig -pidfile -D -chardev -serial file:, programs: -incoming
 * exec:, -netdev tap,script=, sockets: -monitor -gdb -s) and a bare word is taken as a disk image. `-m` is refused
 * because the RAM cap counts `ram` (and memory backends).
 */
const ALLOWED_OPTIONS: Record<string, OptionRule | null> = {
  machine: { syntax: { implied: "type" }, check: (parts) => parts.every((p) => MACHINE_KEYS.has(p.key)) },
  M: { syntax: { implied: "type" }, check: (parts) => parts.every((p) => MACHINE_KEYS.has(p.key)) },
  device: { syntax: { implied: "driver" }, check: valuesIn("driver", DEVICE_DRIVERS) },
  object: { syntax: { implied: "qom-type" }, check: valuesIn("qom-type", OBJECT_TYPES) },
  accel: { syntax: { implied: "accel" }, check: keysIn(["accel", "thread", "split-wx", "kernel-irqchip", "kvm-shadow-mem"]) },
  boot: { syntax: { implied: "order" }, check: keysIn(["order", "once", "menu", "splash-time", "reboot-timeout", "strict"]) },
  icount: { syntax: { implied: "shift" }, check: keysIn(["shift", "align", "sleep", "rr", "rrfile", "rrsnapshot"]) },
  rtc: { syntax: {}, check: keysIn(["base", "clock", "driftfix"]) },
  overcommit: { syntax: {}, check: keysIn(["mem-lock", "cpu-pm"]) },
  msg: { syntax: {}, check: keysIn(["timestamp", "guest-name"]) },
  name: { syntax: { implied: "guest" }, check: keysIn(["guest", "process", "debug-threads"]) },
  smp: { syntax: { implied: "cpus" } },
  numa: { syntax: { implied: "type" } },
  smbios: { syntax: { implied: "type" } },
  global: { syntax: "global" },
  // -cpu model,+feature,key=value: split on every comma (QEMU's parse_cpu_option has no `,,` escape)
  cpu: { check: (parts) => parts.every((p) => !p.value.includes("=") || !hostKey(p.value.split("=")[0])) },
  vga: {},
  k: {},
  uuid: {},
  watchdog: {},
  "watchdog-action": {},
  display: { syntax: "plain", check: oneOf("none", "curses") },
  usbdevice: { syntax: "plain", check: oneOf("tablet", "mouse", "keyboard") },
  "enable-kvm": null, nographic: null, "no-reboot": null, "no-shutdown": null, "no-hpet": null, "no-acpi": null,
  nodefaults: null, "no-user-config": null, usb: null, "enable-sync-profile": null, "win2k-hack": null, "no-fd-bootchk": null,
};

function parseArgument(rule: OptionRule, arg: string): SubOption[] {
  const syntax = rule.syntax ?? "plain";
  if (syntax === "global") return parseGlobal(arg);
  if (syntax === "plain") return arg.split(",").map((value) => ({ key: "", value }));
  return parseQemuOpts(arg, syntax.implied);
}

/** One option word with its argument, as QEMU reads it. */
export interface ParsedOption {
  name: string;
  arg?: string;
  parts: SubOption[];
}

function checkArgument(name: string, rule: OptionRule, arg: string): ParsedOption {
  const refuse = () => new ForbiddenQemuOption(`Forbidden additional option: -${name} ${arg}`);
  // A path, URL or QOM path reaches outside the node; JSON syntax (-device/-object) has keys the checks cannot see.
  if (arg.includes("/") || arg.startsWith("{")) throw refuse();
  const parts = parseArgument(rule, arg);
  // A host key with an empty value names nothing (`romfile=` is how a NIC's boot ROM is switched off).
  if (parts.some((p) => p.value !== "" && hostKey(p.key))) throw refuse();
  if (rule.check && !rule.check(parts)) throw refuse();
  return { name, arg, parts };
}

/** The node's options as QEMU will read them: placeholders expanded, every word checked. Throws ForbiddenQemuOption. */
export function parseQemuOptions(options: string | null | undefined, node: QemuOptionNode): ParsedOption[] {
  const words = splitQemuOptions(options ?? "").map((w) => expandPlaceholders(w, node));
  const parsed: ParsedOption[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (!/^--?[A-Za-z]/.test(word)) throw new ForbiddenQemuOption(`Forbidden additional option: ${word} (options must start with -)`);
    const name = word.replace(/^--?/, "");
    const rule = Object.hasOwn(ALLOWED_OPTIONS, name) ? ALLOWED_OPTIONS[name] : undefined;
    if (rule === undefined) throw new ForbiddenQemuOption(`Forbidden additional option: -${name}`);
    if (rule === null) {
      parsed.push({ name, parts: [] });
      continue;
    }
    const arg = words[++i];
    if (arg === undefined) throw new InvalidInputError(`-${name} needs an argument`);
    parsed.push(checkArgument(name, rule, arg));
  }
  return parsed;
}

/** The argv words of checked options. */
export function qemuOptionsArgv(parsed: ParsedOption[]): string[] {
  return parsed.flatMap((o) => (o.arg === undefined ? [`-${o.name}`] : [`-${o.name}`, o.arg]));
}

const SIZE_UNITS: Record<string, number> = { b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50, e: 2 ** 60 };

/** QEMU's `qemu_strtosz` (bytes by default; k/M/G/T/P/E suffixes, 1024-based; hex without a suffix). */
function qemuSize(text: string): number | null {
  const m = /^\s*(?:(0x[0-9a-f]+)|(\d+(?:\.\d+)?)\s*([bkmgtpe])?)\s*$/i.exec(text);
  if (!m) return null;
  return m[1] ? Number(m[1]) : Number(m[2]) * SIZE_UNITS[(m[3] ?? "b").toLowerCase()];
}

/**
 * RAM the options add besides `ram` (MB): every memory backend's size and every display device's video memory. A
 * backend that becomes the guest's NUMA memory is counted on top of `ram` too — the cap over-counts rather than
 * miss what QEMU allocates.
 */
export function qemuOptionsMemoryMb(parsed: ParsedOption[]): number {
  let bytes = 0;
  const last = (o: ParsedOption, key: string) => o.parts.findLast((p) => p.key === key)?.value;
  const refuse = (o: ParsedOption, why: string) => new ForbiddenQemuOption(`Forbidden additional option: -${o.name} ${o.arg} (${why})`);
  for (const o of parsed) {
    if (o.name === "object" && last(o, "qom-type")?.startsWith("memory-backend")) {
      const size = qemuSize(last(o, "size") ?? "");
      if (size === null) throw refuse(o, "a memory backend needs a size");
      bytes += size;
    }
    const driver = o.name === "device" ? last(o, "driver") : undefined;
    if (driver && Object.hasOwn(DISPLAY_VRAM_MB, driver)) {
      const vram = Number(last(o, "vgamem_mb") ?? DISPLAY_VRAM_MB[driver]);
      if (!Number.isSafeInteger(vram) || vram < 0) throw refuse(o, "vgamem_mb must be a number of MB");
      bytes += vram * 2 ** 20;
    }
  }
  return Math.ceil(bytes / 2 ** 20);
}
