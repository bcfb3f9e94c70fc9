import fs from "node:fs/promises";
import { resolveInside } from "../../files/safe-path.js";
import { VPCS_STARTUP_SCRIPT } from "../vpcs.js";

/**
 * A VPCS node's startup script, `startup.vpc` in its node directory: the runtime passes it to vpcs when present,
 * and the GUI's "Edit config" reads and writes it through the node files API. As in GNS3, a node created with the
 * `base_script_file` property (the built-in VPCS template's `vpcs_base_config.txt`) starts from that base script,
 * and the property is not kept. Only the base scripts shipped here can be named: a client never makes the server
 * read a file of its choosing (GNS3 reads any path, relative to its configs directory or absolute).
 */
/** `%h` is the node name. */
const BASE_SCRIPTS: Record<string, string> = {
  "vpcs_base_config.txt": [
    "# VPCS runs these commands when it starts. To give this PC an address, uncomment",
    "# one of the next two lines: an address from a DHCP server, or a fixed one.",
    "# dhcp",
    "# ip 192.168.1.10 255.255.255.0 192.168.1.1",
    "",
    "set pcname %h",
    "",
  ].join("\n"),
};

/** Splits `base_script_file` off a new VPCS node's properties: the base script it names, and the rest to store. */
export function takeBaseScript(properties: Record<string, unknown>): { script?: string; rest: Record<string, unknown> } {
  const { base_script_file: file, ...rest } = properties;
  return { script: typeof file === "string" && Object.hasOwn(BASE_SCRIPTS, file) ? BASE_SCRIPTS[file] : undefined, rest };
}

/** Writes the script with `%h` replaced by the node name, as GNS3's compute does with a script it is sent. */
export async function writeStartupScript(nodeDir: string, nodeName: string, script: string): Promise<void> {
  await fs.mkdir(nodeDir, { recursive: true });
  await fs.writeFile(await resolveInside(nodeDir, VPCS_STARTUP_SCRIPT), script.replaceAll("%h", () => nodeName));
}

/**
 * After a rename (or a duplicate, whose copied script names the original): the `set pcname` lines take the new
 * name, as GNS3's compute rewrites them, so the PC keeps answering to its node's name. No script, nothing to do.
 */
export async function renameInStartupScript(nodeDir: string, nodeName: string): Promise<void> {
  // A script that is not a plain file of the node (none yet, or a link leading out) is left alone.
  const file = await resolveInside(nodeDir, VPCS_STARTUP_SCRIPT).catch(() => undefined);
  const script = file === undefined ? undefined : await fs.readFile(file, "utf8").catch(() => undefined);
  if (file === undefined || script === undefined) return;
  const renamed = script.replace(/^set pcname .+$/gm, () => `set pcname ${nodeName}`);
  if (renamed !== script) await fs.writeFile(file, renamed);
}
