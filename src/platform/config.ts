import { createHash, randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import os from "node:os";
import path from "node:path";
import { parseBytes } from "./bytes.js";

/** Every setting has an environment variable and a CLI flag; flags win. */
const OPTIONS = {
  mode: { env: "PATCHBAY_MODE", default: "controller", help: "controller (full server) or compute (only the compute API a controller drives)" },
  host: { env: "HOST", default: "127.0.0.1", help: "address to listen on" },
  port: { env: "PORT", default: "3080", help: "TCP port (0 = any free port)" },
  "database-url": {
    env: "DATABASE_URL",
    default: "",
    help: "file:<path> (SQLite, default <data-dir>/patchbay.db) or postgres://... (PostgreSQL)",
  },
  "redis-url": { env: "REDIS_URL", default: "", help: "redis://... to share events between instances" },
  "redis-namespace": {
    env: "PATCHBAY_REDIS_NAMESPACE",
    default: "",
    help: "this deployment's part of the Redis keys (patchbay:<namespace>:...), the same on all its instances (default: a hash of the database's location)",
  },
  "instance-id": {
    env: "PATCHBAY_INSTANCE_ID",
    default: "",
    help: "this instance's name among the instances of one deployment: the nodes it runs are recorded under it (default: <host name>-<hash of the data dir>, stable across restarts)",
  },
  "data-dir": { env: "PATCHBAY_DATA_DIR", default: "./data", help: "where projects, captures and the SQLite file live" },
  "auth-user": { env: "PATCHBAY_AUTH_USER", default: "", help: "HTTP Basic user (with --auth-password; unset = open)" },
  "auth-password": { env: "PATCHBAY_AUTH_PASSWORD", default: "", help: "HTTP Basic password" },
  "tls-cert": { env: "PATCHBAY_TLS_CERT", default: "", help: "PEM certificate: serve HTTPS (with --tls-key)" },
  "tls-key": { env: "PATCHBAY_TLS_KEY", default: "", help: "PEM private key" },
  local: {
    env: "PATCHBAY_LOCAL",
    default: "false",
    help: "local mode: allow /v2/shutdown, /v2/debug, /v2/projects/load and project paths in --allowed-roots",
  },
  "allowed-roots": {
    env: "PATCHBAY_ALLOWED_ROOTS",
    default: "",
    help: `extra directories (separated by "${path.delimiter}") where local mode may place and load projects; <data-dir>/projects is always allowed`,
  },
  "nat-interface": {
    env: "PATCHBAY_NAT_INTERFACE",
    default: "virbr0",
    help: "bridge NAT nodes join when this host has it (libvirt's, as GNS3's default_nat_interface); otherwise Patchbay makes --nat-bridge",
  },
  "nat-bridge": {
    env: "PATCHBAY_NAT_BRIDGE",
    default: "pbnat0",
    help: "name of Patchbay's own NAT bridge (made while a NAT node is linked, with DHCP by dnsmasq and masquerading by nftables)",
  },
  "nat-subnet": {
    env: "PATCHBAY_NAT_SUBNET",
    default: "192.168.122.0/24",
    help: "private IPv4 subnet of Patchbay's own NAT bridge (the bridge takes its first address, DHCP the rest)",
  },
  "console-ports": { env: "PATCHBAY_CONSOLE_PORTS", default: "5000-9999", help: "console port range for nodes (apart from --udp-ports)" },
  "udp-ports": { env: "PATCHBAY_UDP_PORTS", default: "10000-20000", help: "UDP port range for links" },
  "vm-memory-limit": {
    env: "PATCHBAY_VM_MEMORY_LIMIT",
    default: "",
    help: "MB of guest RAM the running QEMU VMs of this compute may use together; a start beyond it answers 409 (default: half of this host's memory)",
  },
  "auto-close-delay": {
    env: "PATCHBAY_AUTO_CLOSE_DELAY",
    default: "5000",
    help: "milliseconds an auto_close project stays open after its last notification listener left",
  },
  "log-format": { env: "PATCHBAY_LOG", default: "json", help: "json (one line per request), pretty (for people: one coloured line each) or off" },
  "body-limit": { env: "PATCHBAY_BODY_LIMIT", default: "1mb", help: "largest JSON body accepted" },
  "upload-limit": { env: "PATCHBAY_UPLOAD_LIMIT", default: "2gb", help: "largest upload (project import, project and node files, emulator images)" },
  "archive-inflated-limit": {
    env: "PATCHBAY_ARCHIVE_INFLATED_LIMIT",
    default: "4gb",
    help: "largest total of the unpacked files of an imported project archive (a larger one answers 413)",
  },
  "archive-entry-limit": { env: "PATCHBAY_ARCHIVE_ENTRY_LIMIT", default: "10000", help: "most files and directories in an imported project archive" },
  "graphql-cost-limit": {
    env: "PATCHBAY_GRAPHQL_COST_LIMIT",
    default: "100000",
    help: "largest estimated cost of a GraphQL operation (fields selected, each list multiplying what it holds); beyond it: QUERY_TOO_COMPLEX",
  },
  "graphql-list-size": {
    env: "PATCHBAY_GRAPHQL_LIST_SIZE",
    default: "20",
    help: "elements the GraphQL cost model assumes for a list field without a first/last argument",
  },
  "ws-subscription-limit": {
    env: "PATCHBAY_WS_SUBSCRIPTION_LIMIT",
    default: "100",
    help: "operations one graphql-ws connection may run at once; more are refused with an error message for that id",
  },
  "url-secret": {
    env: "PATCHBAY_URL_SECRET",
    default: "",
    help: "key that signs download URLs handed out by GraphQL (unset = a random key per process; give instances behind one address the same)",
  },
  "cors-origins": {
    env: "PATCHBAY_CORS_ORIGINS",
    default: "",
    help: "comma-separated origins (scheme://host[:port]) whose web pages may use this server, e.g. a GNS3 Web UI served elsewhere (unset = same origin only)",
  },
  "web-ui-dir": {
    env: "PATCHBAY_WEB_UI_DIR",
    default: "",
    help: "a GNS3 Web UI build (the directory with its index.html) to serve at /static/web-ui/ (GET / then redirects to it; controller mode only)",
  },
} as const;

type Key = keyof typeof OPTIONS;

export type ServerMode = "controller" | "compute";

export interface Config {
  /** compute: serve only what a controller needs of a compute (see src/emulation/compute-api/mode.ts). */
  mode: ServerMode;
  host: string;
  port: number;
  databaseUrl: string;
  redisUrl: string | undefined;
  /** Unset: derived from the database's identity (src/platform/redis-namespace.ts). */
  redisNamespace: string | undefined;
  /** Which instance this is (src/emulation/instances/): who runs a project's nodes is recorded under it. */
  instanceId: string;
  dataDir: string;
  auth: { user: string; password: string } | undefined;
  tls: { certFile: string; keyFile: string } | undefined;
  /** Local mode: the GNS3 `[Server] local` powers (shutdown, debug, load, custom project paths). Off by default. */
  local: boolean;
  /** Absolute directories where local mode may put or load projects, besides <dataDir>/projects. */
  allowedRoots: string[];
  /** NAT nodes (src/emulation/runtime/nat-network.ts): the host's NAT bridge if present, else Patchbay's own. */
  nat: { natInterface: string; bridge: string; subnet: string };
  consolePorts: [number, number];
  udpPorts: [number, number];
  /** MB of guest RAM (the qemu nodes' `ram`) running VMs may add up to; starting one more beyond it is refused. */
  vmMemoryLimit: number;
  /** GNS3 closes an auto_close project this long after its last notification listener left (GNS3: 5 s). */
  autoCloseDelayMs: number;
  logRequests: boolean;
  /** Log lines as JSON (for machines) or formatted for a terminal. */
  logFormat: "json" | "pretty";
  bodyLimit: string;
  uploadLimit: string;
  /** Total unpacked bytes and entries of an imported archive (src/emulation/topology-file/archive.ts). */
  archiveLimits: { inflatedBytes: number; entries: number };
  /** The GraphQL cost budget and the list size assumed without first/last (src/platform/graphql/cost.ts). */
  graphqlCost: { limit: number; listSize: number };
  /** Operations one graphql-ws connection may run at once. */
  wsSubscriptionLimit: number;
  /** The HMAC key of signed download URLs (src/platform/http/signed-url.ts). */
  urlSecret: string;
  /** Origins (as browsers send them) whose pages may call this server cross-origin (src/platform/http/origin-policy.ts). */
  corsOrigins: string[];
  /** A GNS3 Web UI build served at /static/web-ui/ (src/platform/http/web-ui.ts); absolute. */
  webUiDir: string | undefined;
  /** Load the storage demo fixture at start-up (idempotent). */
  demo: boolean;
}

export class ConfigError extends Error {}

export function helpText(): string {
  const lines = ["Usage: patchbay [options]", "", "Options (each also read from the environment variable shown):"];
  for (const [flag, o] of Object.entries(OPTIONS)) {
    lines.push(`  --${flag.padEnd(16)} ${o.env.padEnd(24)} ${o.help}${o.default ? ` (default ${o.default})` : ""}`);
  }
  lines.push(`  --${"demo".padEnd(16)} ${"".padEnd(24)} load the storage demo fixture (SVM, volume, qtrees)`);
  lines.push(`  --${"help".padEnd(16)} ${"".padEnd(24)} show this text`);
  lines.push(`  --${"version".padEnd(16)} ${"".padEnd(24)} print the version`);
  return lines.join("\n");
}

function range(name: string, value: string): [number, number] {
  const m = /^(\d+)-(\d+)$/.exec(value);
  const lo = Number(m?.[1]);
  const hi = Number(m?.[2]);
  if (!m || lo < 1 || hi > 65535 || lo > hi) throw new ConfigError(`${name} must look like 5000-9999`);
  return [lo, hi];
}

function megabytes(name: string, value: string, fallback: number): number {
  if (value === "") return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new ConfigError(`${name} must be a whole number of megabytes`);
  return n;
}

/** Exact origins as a browser's Origin header spells them; stored serialized (lower-case host, no default port). */
function origins(name: string, value: string): string[] {
  const serialized = (o: string) => {
    try {
      return /^https?:\/\/[^/?#@\s]+$/i.test(o) ? new URL(o).origin : undefined;
    } catch {
      return undefined; // a malformed host or port
    }
  };
  return value
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const origin = serialized(o);
      if (!origin) throw new ConfigError(`${name}: ${o.slice(0, 100)} is not an origin (scheme://host[:port], http or https, no path)`);
      return origin;
    });
}

function count(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new ConfigError(`${name} must be a whole number above 0`);
  return n;
}

function bytes(name: string, value: string): number {
  let n = NaN;
  try {
    n = parseBytes(value);
  } catch {}
  if (!(n > 0)) throw new ConfigError(`${name} must be a size such as 512mb or 4gb`);
  return n;
}

function flag(name: string, value: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false`);
}

export function loadConfig(argv: string[] = [], env: NodeJS.ProcessEnv = process.env): Config & { help: boolean; version: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...Object.fromEntries(Object.keys(OPTIONS).map((k) => [k, { type: "string" as const }])),
      demo: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
    },
    strict: true,
  });
  const flags = values as Record<string, string | boolean | undefined>;
  const get = (k: Key): string => (flags[k] as string | undefined) ?? env[OPTIONS[k].env] ?? OPTIONS[k].default;
  const mode = get("mode");
  if (mode !== "controller" && mode !== "compute") throw new ConfigError("PATCHBAY_MODE must be controller or compute");
  const port = Number(get("port"));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError("PORT must be 0-65535");
  const autoCloseDelayMs = Number(get("auto-close-delay"));
  if (!Number.isInteger(autoCloseDelayMs) || autoCloseDelayMs < 0) throw new ConfigError("PATCHBAY_AUTO_CLOSE_DELAY must be a whole number of milliseconds");
  const dataDir = path.resolve(get("data-dir"));
  const user = get("auth-user");
  const password = get("auth-password");
  if (Boolean(user) !== Boolean(password)) throw new ConfigError("set both PATCHBAY_AUTH_USER and PATCHBAY_AUTH_PASSWORD");
  const databaseUrl = get("database-url") || `file:${path.join(dataDir, "patchbay.db")}`;
  if (!/^(file:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    const scheme = /^[a-z][\w+.-]*:/i.exec(databaseUrl)?.[0] ?? databaseUrl.slice(0, 20);
    throw new ConfigError(`DATABASE_URL must be file:<path> (SQLite) or postgres://… (PostgreSQL); ${scheme} is not supported`);
  }
  const redisNamespace = get("redis-namespace") || undefined;
  if (redisNamespace !== undefined && !/^[\w.-]{1,64}$/.test(redisNamespace)) {
    throw new ConfigError("PATCHBAY_REDIS_NAMESPACE must be 1-64 letters, digits, _ . or -");
  }
  const instanceId = get("instance-id") || `${os.hostname()}-${createHash("sha256").update(dataDir).digest("hex").slice(0, 8)}`;
  if (!/^[\w.-]{1,100}$/.test(instanceId)) throw new ConfigError("PATCHBAY_INSTANCE_ID must be 1-100 letters, digits, _ . or -");
  const logFormat = get("log-format");
  if (!["json", "pretty", "off"].includes(logFormat)) throw new ConfigError("PATCHBAY_LOG must be json, pretty or off");
  const certFile = get("tls-cert");
  const keyFile = get("tls-key");
  if (Boolean(certFile) !== Boolean(keyFile)) throw new ConfigError("set both PATCHBAY_TLS_CERT and PATCHBAY_TLS_KEY");
  const consolePorts = range("PATCHBAY_CONSOLE_PORTS", get("console-ports"));
  const udpPorts = range("PATCHBAY_UDP_PORTS", get("udp-ports"));
  // Each range is for one use (firewall rules, port windows per instance): an overlap is a mistake the operator
  // would otherwise never hear of.
  if (consolePorts[0] <= udpPorts[1] && udpPorts[0] <= consolePorts[1]) {
    throw new ConfigError(`PATCHBAY_CONSOLE_PORTS ${consolePorts.join("-")} and PATCHBAY_UDP_PORTS ${udpPorts.join("-")} overlap: give them separate ranges`);
  }
  const ifname = /^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,15}$/; // as runtime/host-interfaces.ts: names reach socat, nft and dnsmasq
  const nat = { natInterface: get("nat-interface"), bridge: get("nat-bridge"), subnet: get("nat-subnet") };
  if (!ifname.test(nat.natInterface)) throw new ConfigError("PATCHBAY_NAT_INTERFACE must be an interface name (1-15 letters, digits, '.', '_' or '-')");
  if (!ifname.test(nat.bridge)) throw new ConfigError("PATCHBAY_NAT_BRIDGE must be an interface name (1-15 letters, digits, '.', '_' or '-')");
  if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(nat.subnet)) throw new ConfigError("PATCHBAY_NAT_SUBNET must be an IPv4 subnet such as 192.168.122.0/24");
  return {
    help: Boolean(values.help),
    version: Boolean(values.version),
    demo: Boolean(values.demo),
    mode,
    host: get("host"),
    port,
    databaseUrl,
    redisUrl: get("redis-url") || undefined,
    redisNamespace,
    instanceId,
    dataDir,
    auth: user ? { user, password } : undefined,
    tls: certFile ? { certFile, keyFile } : undefined,
    local: flag("PATCHBAY_LOCAL", get("local")),
    allowedRoots: get("allowed-roots")
      .split(path.delimiter)
      .filter(Boolean)
      .map((root) => path.resolve(root)),
    nat,
    consolePorts,
    udpPorts,
    vmMemoryLimit: megabytes("PATCHBAY_VM_MEMORY_LIMIT", get("vm-memory-limit"), Math.floor(os.totalmem() / 2 ** 21)),
    autoCloseDelayMs,
    logRequests: logFormat !== "off",
    logFormat: logFormat === "pretty" ? "pretty" : "json",
    bodyLimit: get("body-limit"),
    uploadLimit: get("upload-limit"),
    archiveLimits: {
      inflatedBytes: bytes("PATCHBAY_ARCHIVE_INFLATED_LIMIT", get("archive-inflated-limit")),
      entries: count("PATCHBAY_ARCHIVE_ENTRY_LIMIT", get("archive-entry-limit")),
    },
    graphqlCost: { limit: count("PATCHBAY_GRAPHQL_COST_LIMIT", get("graphql-cost-limit")), listSize: count("PATCHBAY_GRAPHQL_LIST_SIZE", get("graphql-list-size")) },
    wsSubscriptionLimit: count("PATCHBAY_WS_SUBSCRIPTION_LIMIT", get("ws-subscription-limit")),
    urlSecret: get("url-secret") || randomBytes(32).toString("hex"),
    corsOrigins: origins("PATCHBAY_CORS_ORIGINS", get("cors-origins")),
    webUiDir: get("web-ui-dir") ? path.resolve(get("web-ui-dir")) : undefined,
  };
}
