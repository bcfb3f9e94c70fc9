import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ConflictError } from "../../platform/core/errors.js";
import { findOnPath } from "../../platform/core/executables.js";

/**
 * What the host gives QEMU nodes besides the emulator: whether hardware acceleration really works, and
 * qemu-img for linked clones (looked up in $PATH, like the emulator binaries).
 */
const run = promisify(execFile);

let kvmProbe: Promise<boolean> | undefined;

/**
 * Whether `-accel kvm` runs guests here, decided once per process by trying. `/dev/kvm` alone proves nothing:
 * on a nested PVM layer (kvm_pvm) it exists, runs the BIOS and hangs every stock kernel without a word. So KVM
 * counts only with a hardware module (kvm_intel / kvm_amd) and the CPU flag, and when a trial machine under
 * `-accel kvm` reaches its firmware's first output within two seconds.
 */
export function kvmUsable(binary: string): Promise<boolean> {
  kvmProbe ??= probeKvm(binary).catch(() => false);
  return kvmProbe;
}

async function probeKvm(binary: string): Promise<boolean> {
  if (process.env.PATCHBAY_QEMU_NO_KVM) return false;
  try {
    fs.accessSync("/dev/kvm", fs.constants.R_OK | fs.constants.W_OK);
  } catch {
    return false;
  }
  const hardware = ["kvm_intel", "kvm_amd"].some((m) => fs.existsSync(`/sys/module/${m}`));
  if (!hardware || !/\b(vmx|svm)\b/.test(fs.readFileSync("/proc/cpuinfo", "latin1"))) return false;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-kvm-"));
  const out = path.join(dir, "firmware.log");
  const child = spawn(binary, ["-accel", "kvm", "-M", "pc", "-m", "16M", "-nodefaults", "-display", "none",
    "-chardev", `file,id=fw,path=${out}`, "-device", "isa-debugcon,iobase=0x402,chardev=fw"], { stdio: "ignore" });
  try {
    const deadline = Date.now() + 2000;
    while (Date.now() < deadline && child.exitCode === null) {
      if (fs.existsSync(out) && fs.statSync(out).size > 0) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  } finally {
    child.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The node's copy of a disk: a qcow2 overlay `<node dir>/<disk>_disk.qcow2` backed by the image (created once,
 * kept across starts), so the node writes only its overlay and never the base image (compat-qemu §8).
 */
export async function linkedClone(base: string, nodeDir: string, disk: string): Promise<string> {
  const overlay = path.join(nodeDir, `${disk}_disk.qcow2`);
  if (fs.existsSync(overlay)) return overlay;
  const qemuImg = findOnPath("qemu-img");
  if (!qemuImg) throw new ConflictError("qemu-img is not installed on this host (Debian package qemu-utils): linked clones need it");
  const log = path.join(nodeDir, "qemu-img.log");
  try {
    const { stdout } = await run(qemuImg, ["info", "--output=json", base]);
    const format = String((JSON.parse(stdout) as { format?: string }).format ?? "raw");
    const tmp = `${overlay}.tmp`;
    const args = ["create", "-f", "qcow2", "-F", format, "-b", base, tmp];
    const r = await run(qemuImg, args);
    fs.appendFileSync(log, `${[qemuImg, ...args].join(" ")}\n${r.stdout}${r.stderr}`);
    fs.renameSync(tmp, overlay);
    return overlay;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    fs.appendFileSync(log, `${err.stderr ?? err.message}\n`);
    throw new ConflictError(`Could not create the linked clone of ${path.basename(base)} for ${disk}: ${(err.stderr ?? err.message).trim().slice(0, 300)}`);
  }
}

export interface QemuBinary {
  path: string;
  version: string;
}

/**
 * GNS3's `/qemu/binaries` and `/qemu/img-binaries`: every executable in $PATH whose name matches, with the version
 * its `-version` (qemu-img: `--version`) prints. Scanned on each call, as upstream (a package installed later
 * shows); with usrmerge /bin and /usr/bin both list the same programs, as upstream's answer does.
 */
export async function qemuBinaries(kind: "system" | "img"): Promise<QemuBinary[]> {
  const matches = kind === "img" ? (n: string) => n === "qemu-img" : (n: string) => /^qemu-system-[\w-]+$|^qemu-kvm$/.test(n);
  const out: QemuBinary[] = [];
  for (const dir of new Set((process.env.PATH ?? "/usr/bin:/bin").split(":").filter(Boolean))) {
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter(matches).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      if (!findOnPath(name, file)) continue; // not an executable file
      try {
        const { stdout } = await run(file, [kind === "img" ? "--version" : "-version"], { timeout: 5000 });
        const version = /version (\d+(?:\.\d+)+)/.exec(stdout)?.[1];
        if (version) out.push({ path: file, version });
      } catch {
        // a binary that does not run is not offered
      }
    }
  }
  return out;
}
