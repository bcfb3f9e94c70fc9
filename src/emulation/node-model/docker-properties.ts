import { z } from "zod";
import { ConflictError, InvalidInputError } from "../../platform/core/errors.js";
import { parseInput } from "../../platform/input.js";
import { dockerBaseMac, MAC_PATTERN } from "./adapters.js";

/**
 * The docker node's properties (GNS3 2.2's docker compute schema, compat-docker §2.1): what a client may set, GNS3's
 * defaults, and the rules that keep every value safe to hand to dockerd. Stored in the node row under GNS3's names and
 * returned with every key present, as GNS3's compute returns them.
 */

export const DOCKER_CONSOLE_TYPES = ["telnet", "vnc", "http", "https", "none"] as const;

const nullableText = z.string().nullable().optional();
export const dockerPropertiesSchema = z.object({
  image: z.string().min(1).optional(),
  adapters: z.int().min(0).max(99).nullable().optional(),
  mac_address: z.union([z.string().regex(MAC_PATTERN, "must be a MAC address XX:XX:XX:XX:XX:XX"), z.literal(""), z.null()]).optional(),
  start_command: nullableText,
  environment: nullableText,
  extra_hosts: nullableText,
  extra_volumes: z.array(z.string()).optional(),
  console_resolution: z.string().regex(/^[0-9]+x[0-9]+$/, "must be WIDTHxHEIGHT").optional(),
  console_http_port: z.int().min(1).max(65535).optional(),
  console_http_path: z.string().optional(),
  aux: z.int().min(1).max(65535).nullable().optional(),
  usage: z.string().optional(),
  container_id: z.string().regex(/^[a-f0-9]{12,64}$/).nullable().optional(),
  // Accepted where GNS3's controller forwards them; ports come from the node's top-level custom_adapters.
  custom_adapters: z.array(z.record(z.string(), z.unknown())).optional(),
});
export type DockerProperties = {
  image: string;
  adapters: number;
  mac_address: string;
  start_command: string | null;
  environment: string | null;
  extra_hosts: string | null;
  extra_volumes: string[];
  console_resolution: string;
  console_http_port: number;
  console_http_path: string;
  aux: number | null;
  usage: string;
  container_id: string | null;
};

const blankToNull = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v : null);

/**
 * A docker node's properties with GNS3's defaults, checked (400 for a malformed value, 409 for what GNS3's compute
 * refuses: extra hosts, start command, volumes). `image` without a tag gets `:latest`, as GNS3 echoes it.
 */
export function prepareDockerProperties(nodeId: string, merged: Record<string, unknown>): DockerProperties {
  const known = Object.fromEntries(Object.entries(merged).filter(([k]) => k in dockerPropertiesSchema.shape));
  const p = parseInput(dockerPropertiesSchema, known);
  if (!p.image) throw new InvalidInputError("'image' is a required property");
  const image = imageWithTag(p.image);
  const startCommand = blankToNull(p.start_command)?.trim() ?? null;
  const out: DockerProperties = {
    image,
    adapters: p.adapters ?? 1,
    mac_address: p.mac_address ? p.mac_address.toLowerCase() : dockerBaseMac(nodeId),
    start_command: startCommand,
    environment: blankToNull(p.environment),
    extra_hosts: blankToNull(p.extra_hosts),
    extra_volumes: p.extra_volumes ?? [],
    console_resolution: p.console_resolution ?? "1024x768",
    console_http_port: p.console_http_port ?? 80,
    console_http_path: p.console_http_path ?? "/",
    aux: p.aux ?? null,
    usage: p.usage ?? "",
    container_id: p.container_id ?? null,
  };
  checkImageName(image);
  if (startCommand !== null) splitCommand(startCommand);
  if (out.extra_hosts !== null) extraHosts(out.extra_hosts);
  for (const v of out.extra_volumes) checkVolume(v);
  return out;
}

export function imageWithTag(image: string): string {
  const lastSlash = image.lastIndexOf("/");
  return image.slice(lastSlash + 1).includes(":") || image.includes("@") ? image : `${image}:latest`;
}

/** Docker's reference grammar, loosely: registry host[:port]/path components, tag or digest; no spaces, no control. */
const IMAGE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._\-/:@]{0,254}$/;
function checkImageName(image: string): void {
  if (!IMAGE_NAME.test(image) || image.includes("..") || image.includes("//")) throw new ConflictError(`Invalid Docker image name '${image}'`);
}

/** GNS3's shlex.split of start_command (POSIX rules: quotes, backslash escapes); 409 on an unclosed quote. */
export function splitCommand(command: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && i + 1 < command.length && '"\\$`'.includes(command[i + 1])) cur += command[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\") {
      if (i + 1 >= command.length) throw new ConflictError(`Invalid start command '${command}': No escaped character`);
      cur += command[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) throw new ConflictError(`Invalid start command '${command}': No closing quotation`);
  if (inWord) out.push(cur);
  return out;
}

/** `host:ip` lines → Docker's ExtraHosts entries (`host:ip`); 409 with GNS3's text for a line without exactly one colon. */
export function extraHosts(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const parts = line.split(":");
    if (parts.length !== 2 || !parts[0].trim() || !parts[1].trim()) throw new ConflictError(`Can't apply \`ExtraHosts\`, wrong format: ${line}`);
    const [host, ip] = parts.map((s) => s.trim());
    if (!/^[a-zA-Z0-9._-]+$/.test(host) || !/^[0-9a-fA-F.]+$/.test(ip)) throw new ConflictError(`Can't apply \`ExtraHosts\`, wrong format: ${line}`);
    out.push(`${host}:${ip}`);
  }
  return out;
}

/** An extra volume: absolute, no `..` (GNS3's rule), and only plain path characters (it names a directory of the node). */
export function checkVolume(volume: string): void {
  if (!volume.startsWith("/") || volume.includes("..")) {
    throw new ConflictError(`Persistent volume '${volume}' has invalid format. It must start with a '/' and not contain '..'.`);
  }
  if (!/^[a-zA-Z0-9._\-/]+$/.test(volume) || volume === "/") throw new ConflictError(`Persistent volume '${volume}' has invalid characters`);
}

/**
 * The `environment` lines as GNS3 passes them: trimmed, `GNS3_*` and nameless lines dropped, `%vm-name%` (quoted),
 * `%vm-id%`, `%project-id%` replaced.
 */
export function environmentLines(text: string | null, node: { name: string; id: string; projectId: string }): string[] {
  if (!text) return [];
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("GNS3_") || !line.includes("=") || line.startsWith("=")) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*=/.test(line)) continue;
    out.push(line.replaceAll("%vm-name%", `"${node.name}"`).replaceAll("%vm-id%", node.id).replaceAll("%project-id%", node.projectId));
  }
  return out;
}
