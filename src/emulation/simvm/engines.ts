import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { listComputes } from "../computes/operations.js";
import { LOCAL_ID, VM_ID } from "../computes/model.js";
import { getSimVmSettings, type EngineId } from "./operations.js";

export interface SimVmEngine {
  engine_id: EngineId;
  name: string;
  description: string;
  support_when_exit: boolean;
  support_headless: boolean;
  support_ram: boolean;
}

const ENGINE_LIST: SimVmEngine[] = [
  {
    engine_id: "vmware",
    name: process.platform === "darwin" ? "VMware Fusion" : "VMware Workstation / Player",
    description: "Runs the VM host in VMware, driven with the <code>vmrun</code> tool, which must be on the server's PATH.",
    support_when_exit: true,
    support_headless: true,
    support_ram: true,
  },
  {
    engine_id: "virtualbox",
    name: "VirtualBox",
    description: "Runs the VM host in VirtualBox, driven with <code>VBoxManage</code>, which must be on the server's PATH.",
    support_when_exit: true,
    support_headless: true,
    support_ram: true,
  },
  ...(process.platform === "win32"
    ? [
        {
          engine_id: "hyper-v" as const,
          name: "Hyper-V",
          description: "Runs the VM host in Microsoft Hyper-V (Windows only).",
          support_when_exit: true,
          support_headless: false,
          support_ram: true,
        },
      ]
    : []),
  {
    engine_id: "remote",
    name: "Remote",
    description: "Uses a compute already registered on this server as the VM host.",
    support_when_exit: false,
    support_headless: false,
    support_ram: false,
  },
];

export function listEngines(): SimVmEngine[] {
  return ENGINE_LIST;
}

/** The command-line tool each local hypervisor is driven with. */
const TOOLS: Record<string, string> = { vmware: "vmrun", virtualbox: "VBoxManage" };

/** The tool's full path when it is on PATH (and executable), else undefined. */
export function findOnPath(tool: string): string | undefined {
  const exts = process.platform === "win32" ? (process.env.PATHEXT ?? ".EXE").split(";") : [""];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    for (const ext of exts) {
      const candidate = path.join(dir, tool + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {}
    }
  }
  return undefined;
}

/** Why `engine` cannot serve as VM host here (tool missing, platform), or undefined when it can. */
export function engineUnavailable(engine: EngineId): string | undefined {
  if (!ENGINE_LIST.some((e) => e.engine_id === engine)) return `The engine ${engine} is not supported on this server`;
  const tool = TOOLS[engine];
  return tool && !findOnPath(tool) ? `${tool} was not found on the server's PATH` : undefined;
}

/**
 * The VMs an engine offers as VM host. A missing hypervisor yields [] as in GNS3, unless the VM host is enabled
 * on that engine, where the absence is an error worth reporting (409).
 */
export async function listEngineVms(ctx: AppContext, engine: string): Promise<{ vmname: string }[]> {
  if (!ENGINE_LIST.some((e) => e.engine_id === engine)) throw new NotFoundError(`The engine ${engine} is not supported on this server`);
  if (engine === "remote") {
    return (await listComputes(ctx)).filter((c) => c.compute_id !== LOCAL_ID && c.compute_id !== VM_ID).map((c) => ({ vmname: c.name }));
  }
  const missing = engineUnavailable(engine as EngineId);
  if (missing) {
    const settings = await getSimVmSettings(ctx);
    if (settings.enable && settings.engine === engine) throw new ConflictError(missing);
    return [];
  }
  const tool = findOnPath(TOOLS[engine])!;
  return engine === "virtualbox" ? virtualBoxVms(tool) : vmwareVms();
}

async function virtualBoxVms(vboxmanage: string): Promise<{ vmname: string }[]> {
  const { stdout } = await promisify(execFile)(vboxmanage, ["list", "vms"], { timeout: 10_000 });
  // Lines look like: "name" {uuid}
  return [...stdout.matchAll(/^"(.*)" \{[0-9a-f-]+\}$/gm)].map((m) => ({ vmname: m[1] }));
}

/** VMware keeps its VM library in an inventory file: vmlistN.config = "<path>.vmx", vmlistN.DisplayName = "<name>". */
function vmwareVms(): { vmname: string }[] {
  const inventory =
    process.platform === "win32"
      ? path.join(process.env.APPDATA ?? "", "VMware", "inventory.vmls")
      : process.platform === "darwin"
        ? path.join(os.homedir(), "Library", "Application Support", "VMware Fusion", "vmInventory")
        : path.join(os.homedir(), ".vmware", "inventory.vmls");
  let text: string;
  try {
    text = fs.readFileSync(inventory, "utf8");
  } catch {
    return [];
  }
  const entries = new Map<string, { config?: string; name?: string }>();
  for (const m of text.matchAll(/^(vmlist\d+)\.(config|DisplayName)\s*=\s*"(.*)"\s*$/gm)) {
    const e = entries.get(m[1]) ?? {};
    if (m[2] === "config") e.config = m[3];
    else e.name = m[3];
    entries.set(m[1], e);
  }
  return [...entries.values()]
    .filter((e) => e.config?.endsWith(".vmx"))
    .map((e) => ({ vmname: e.name ?? path.basename(e.config!, ".vmx") }));
}
