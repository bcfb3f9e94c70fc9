import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findOnPath } from "../../src/platform/core/executables.js";

/**
 * The QEMU lab's tiny guest (scripts/build-test-guest.sh: Debian cloud kernel + busybox initramfs, cached) and
 * its serial console: a busybox shell whose prompt is `<hostname># `. Used by the QEMU lab test and bench/qemu.ts.
 */
const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../scripts/build-test-guest.sh");

export const qemuInstalled = () => findOnPath("qemu-system-x86_64") !== null && findOnPath("qemu-img") !== null;

/** Builds (or finds cached) the guest; returns the paths of vmlinuz and initrd.gz. */
export function testGuest(): { kernel: string; initrd: string } {
  const r = spawnSync(SCRIPT, { encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) throw new Error(`build-test-guest.sh failed (${r.status}): ${r.stderr}`);
  const dir = r.stdout.trim().split("\n").pop()!;
  return { kernel: path.join(dir, "vmlinuz"), initrd: path.join(dir, "initrd.gz") };
}

/** The node properties of a guest VM: 128 MB (64 does not boot), one virtio NIC (the cloud kernel has no e1000). */
export function guestProperties(hostname: string, ip: string) {
  return {
    platform: "x86_64",
    ram: 128,
    adapters: 1,
    adapter_type: "virtio-net-pci",
    kernel_image: "vmlinuz",
    initrd: "initrd.gz",
    kernel_command_line: `console=ttyS0 quiet ip=${ip} hostname=${hostname}`,
  };
}

/** busybox ash asks for the cursor position (ESC[6n) after each prompt. */
const promptOf = (hostname: string) => new RegExp(`${hostname}# (\\x1b\\[6n)?$`);

export class GuestConsole {
  private constructor(
    readonly client: TelnetClient,
    private readonly prompt: RegExp,
  ) {}

  /**
   * Connects to a VM's serial console and waits for the shell. QEMU does not replay what the guest printed before
   * the connection, so an empty line is sent now and then to get a fresh prompt.
   */
  static async open(port: number, host: string, hostname: string, timeoutMs = 90_000): Promise<GuestConsole> {
    const client = await TelnetClient.connect(port, host);
    const prompt = promptOf(hostname);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await client.waitFor(prompt, 5000);
        return new GuestConsole(client, prompt);
      } catch (e) {
        if (Date.now() > deadline) {
          client.close();
          throw e;
        }
        client.send("\r");
      }
    }
  }

  run(command: string, timeoutMs = 30_000): Promise<string> {
    return this.client.run(command, timeoutMs, this.prompt);
  }

  close(): void {
    this.client.close();
  }
}

/** busybox ping's summary: how many replies came back. */
export function received(pingOutput: string): number {
  const m = /(\d+) packets received/.exec(pingOutput);
  if (!m) throw new Error(`no ping summary in ${JSON.stringify(pingOutput.slice(-300))}`);
  return Number(m[1]);
}

/**
 * QEMU processes whose command line mentions one of the ids (a VM's -uuid is its node id): what is left running.
 * Only the emulator counts, not the sandbox around it (whose command line holds QEMU's too).
 */
export function processesMentioning(ids: string[]): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "latin1");
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "latin1");
      if (/\) [ZX] /.test(stat)) continue;
      if (/^qemu-system/.test(path.basename(cmdline.split("\0")[0])) && ids.some((id) => cmdline.includes(id))) out.push(Number(entry));
    } catch {}
  }
  return out;
}
