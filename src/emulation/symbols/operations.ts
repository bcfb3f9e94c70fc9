import fs from "node:fs";
import path from "node:path";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, InvalidInputError } from "../../platform/core/errors.js";
import { packagePath } from "../../platform/core/package-root.js";
import { isPlainName, newFileInside, resolveInside } from "../files/safe-path.js";
import { imageSize } from "./dimensions.js";

/**
 * Node symbols: the built-in set drawn for Patchbay (ids `:/symbols/<theme>/<file>`, one directory per theme
 * under ./builtin) and the user's uploads in <dataDir>/symbols (id = file name, theme "Custom symbols").
 */
export interface SymbolEntry {
  symbol_id: string;
  filename: string;
  theme: string;
  builtin: boolean;
}

const BUILTIN_DIR = packagePath("src", "emulation", "symbols", "builtin");
const CUSTOM_THEME = "Custom symbols";
const DEFAULT_ID = ":/symbols/classic/computer.svg";
/** Uploads larger than this are refused (413): symbols are small drawings. */
export const SYMBOL_MAX_BYTES = 2 * 1024 * 1024;

const themeName = (dir: string) => dir.charAt(0).toUpperCase() + dir.slice(1);

/** Built-ins are part of the product: read once. */
const BUILTINS: (SymbolEntry & { file: string })[] = fs
  .readdirSync(BUILTIN_DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    fs
      .readdirSync(path.join(BUILTIN_DIR, d.name))
      .sort()
      .map((filename) => ({
        symbol_id: `:/symbols/${d.name}/${filename}`,
        filename,
        theme: themeName(d.name),
        builtin: true,
        file: path.join(BUILTIN_DIR, d.name, filename),
      })),
  );

const customDir = (ctx: AppContext) => path.join(ctx.config.dataDir, "symbols");

export function listSymbols(ctx: AppContext): SymbolEntry[] {
  let custom: SymbolEntry[] = [];
  try {
    custom = fs
      .readdirSync(customDir(ctx), { withFileTypes: true })
      .filter((e) => e.isFile() && !e.name.startsWith("."))
      .map((e) => ({ symbol_id: e.name, filename: e.name, theme: CUSTOM_THEME, builtin: false }));
  } catch {}
  const all = [...BUILTINS.map(({ file: _file, ...entry }) => entry), ...custom];
  return all.sort((a, b) => a.theme.localeCompare(b.theme) || a.filename.localeCompare(b.filename));
}

/**
 * The file behind an id. Unknown ids fall back as in GNS3: to the classic symbol with the same base name (nodes
 * created with GNS3's short ids like `:/symbols/computer.svg` land there), else to the classic computer.
 */
export async function resolveSymbol(ctx: AppContext, symbolId: string): Promise<{ file: string; filename: string }> {
  const builtin = BUILTINS.find((b) => b.symbol_id === symbolId);
  if (builtin) return builtin;
  if (isPlainName(symbolId)) {
    const file = await resolveInside(customDir(ctx), symbolId).catch(() => undefined);
    if (file && fs.statSync(file, { throwIfNoEntry: false })?.isFile()) return { file, filename: symbolId };
  }
  const base = symbolId.split(/[\\/]/).pop() ?? "";
  return BUILTINS.find((b) => b.theme === "Classic" && b.filename === base) ?? BUILTINS.find((b) => b.symbol_id === DEFAULT_ID)!;
}

export async function readSymbol(ctx: AppContext, symbolId: string) {
  const { file, filename } = await resolveSymbol(ctx, symbolId);
  return { filename, data: fs.readFileSync(file), modified: fs.statSync(file).mtime };
}

export async function symbolDimensions(ctx: AppContext, symbolId: string): Promise<{ width: number; height: number }> {
  const { filename, data } = await readSymbol(ctx, symbolId);
  const size = imageSize(data);
  if (!size) throw new ConflictError(`Could not read the size of symbol ${filename}`);
  return size;
}

/**
 * Stores an upload as <dataDir>/symbols/<basename of the id> (directories in the id are dropped, as in GNS3).
 * Written aside and renamed, so readers never see half a file and a symlink planted at the name is replaced,
 * not followed.
 */
export async function uploadSymbol(ctx: AppContext, symbolId: string, data: Buffer): Promise<SymbolEntry> {
  const name = symbolId.split(/[\\/]/).pop() ?? "";
  const dir = customDir(ctx);
  fs.mkdirSync(dir, { recursive: true });
  const target = await newFileInside(dir, name);
  if (!target) throw new InvalidInputError(`Invalid symbol name "${name}"`);
  if (data.length > SYMBOL_MAX_BYTES) throw new InvalidInputError(`A symbol may not exceed ${SYMBOL_MAX_BYTES} bytes`);
  const tmp = path.join(dir, `.upload-${process.pid}-${Date.now()}-${name}`);
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, target);
  return { symbol_id: name, filename: name, theme: CUSTOM_THEME, builtin: false };
}

/**
 * Which symbol each kind of node gets by default, per theme (GET /v2/default_symbols): GNS3's Classic roles, each
 * drawn here (a built-in template's short id, `:/symbols/<role file>`, resolves to the same file by base name).
 */
const CLASSIC_ROLES: Record<string, string> = {
  cloud: "cloud.svg",
  nat: "nat.svg",
  ethernet_switch: "ethernet_switch.svg",
  ethernet_hub: "hub.svg",
  frame_relay_switch: "frame_relay_switch.svg",
  atm_switch: "atm_switch.svg",
  router: "router.svg",
  multilayer_switch: "multilayer_switch.svg",
  firewall: "firewall.svg",
  computer: "computer.svg",
  vpcs_guest: "vpcs_guest.svg",
  qemu_guest: "qemu_guest.svg",
  vbox_guest: "vbox_guest.svg",
  vmware_guest: "vmware_guest.svg",
  docker_guest: "docker_guest.svg",
};

export function defaultSymbols(): Record<string, Record<string, string>> {
  return { Classic: Object.fromEntries(Object.entries(CLASSIC_ROLES).map(([role, file]) => [role, `:/symbols/classic/${file}`])) };
}
