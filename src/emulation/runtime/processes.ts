import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { freshRead } from "../../platform/fresh-read.js";

/**
 * The processes the runtime starts, and how it finds them again. Every process carries PATCHBAY_RUNTIME_OWNER
 * (which server) and PATCHBAY_NODE_ID (which node) in its environment, is recorded in a pid file under
 * <dataDir>/run/, and is only ever signalled after its environment proved it is ours. Finding processes by that
 * marker reads every process's environment (slow, and synchronous for exit handlers): it is kept for crash recovery
 * and failures. A running node's processes are found as the descendants of the process the runtime spawned, from
 * the parent pids in /proc, read without blocking the event loop.
 */
export const OWNER_ENV = "PATCHBAY_RUNTIME_OWNER";
export const NODE_ENV = "PATCHBAY_NODE_ID";

/** `<runDir>/<node>.json`: what recoverLeftovers reads after a crash (every runtime process kind writes one). */
export interface PidFile {
  owner: string;
  nodeId: string;
  pids: number[];
  commandLine: string;
}

export function writePidFile(file: string, body: PidFile): void {
  fs.writeFileSync(file, JSON.stringify(body));
}

function parseEnviron(raw: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const kv of raw.split("\0")) {
    const i = kv.indexOf("=");
    if (i > 0) env.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return env;
}

function readEnviron(pid: number): Map<string, string> | undefined {
  try {
    return parseEnviron(fs.readFileSync(`/proc/${pid}/environ`, "latin1"));
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** The other processes' pids, from /proc's entries. */
const otherPids = (entries: string[]) => entries.filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => pid !== process.pid);

/** Carries the markers of this server (and of the node, when given), and still lives. */
const isOwned = (pid: number, env: Map<string, string> | undefined, owner: string, nodeId?: string) =>
  env?.get(OWNER_ENV) === owner && (nodeId === undefined || env.get(NODE_ENV) === nodeId) && isAlive(pid);

/** Every live process started by this server (optionally: for one node). Synchronous: exit handlers use it. */
export function findOwnedPids(owner: string, nodeId?: string): number[] {
  return otherPids(fs.readdirSync("/proc")).filter((pid) => isOwned(pid, readEnviron(pid), owner, nodeId));
}

/** findOwnedPids, reading the environments without holding the event loop (a busy host has thousands). */
async function findOwnedPidsAsync(owner: string): Promise<number[]> {
  const pids = otherPids(await fsp.readdir("/proc"));
  const envs = await Promise.all(pids.map((pid) => fsp.readFile(`/proc/${pid}/environ`, "latin1").then(parseEnviron, () => undefined)));
  return pids.filter((pid, i) => isOwned(pid, envs[i], owner));
}

const isOurs = (pid: number, owner: string) => isOwned(pid, readEnviron(pid), owner);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM, wait up to `graceMs`, then SIGKILL; resolves when none of the pids is alive. */
export async function killAndWait(pids: number[], owner: string, graceMs = 2000): Promise<void> {
  const ours = pids.filter((p) => isOurs(p, owner));
  for (const p of ours) {
    try {
      process.kill(p, "SIGTERM");
    } catch {}
  }
  const deadline = Date.now() + graceMs;
  while (ours.some(isAlive) && Date.now() < deadline) await sleep(25);
  for (const p of ours.filter(isAlive)) {
    try {
      process.kill(p, "SIGKILL");
    } catch {}
  }
  const hard = Date.now() + 2000;
  while (ours.some(isAlive) && Date.now() < hard) await sleep(25);
}

/** The processes a pid file of this server records (a leftover of a node about to start again), killed. */
export async function killRecorded(pidFile: string, owner: string): Promise<void> {
  let recorded: PidFile;
  try {
    recorded = JSON.parse(fs.readFileSync(pidFile, "utf8")) as PidFile;
  } catch {
    return; // none: the node left nothing behind
  }
  if (recorded.owner === owner) await killAndWait(recorded.pids, owner);
  fs.rmSync(pidFile, { force: true });
}

/** Synchronous variant for process exit handlers. */
export function killNowSync(owner: string): void {
  for (const p of findOwnedPids(owner)) {
    try {
      process.kill(p, "SIGKILL");
    } catch {}
  }
}


/**
 * Crash recovery at start-up: kill every process recorded in <runDir>/*.json or still carrying this server's
 * marker, then clear the pid files. Returns the pids that were killed.
 */
export async function recoverLeftovers(runDir: string, owner: string): Promise<number[]> {
  const pids = new Set<number>(await findOwnedPidsAsync(owner));
  if (fs.existsSync(runDir)) {
    for (const f of fs.readdirSync(runDir)) {
      if (!f.endsWith(".json")) continue;
      try {
        const pf = JSON.parse(fs.readFileSync(path.join(runDir, f), "utf8")) as PidFile;
        if (pf.owner === owner) for (const p of pf.pids) if (isOurs(p, owner)) pids.add(p);
      } catch {}
      fs.rmSync(path.join(runDir, f), { force: true });
    }
  }
  await killAndWait([...pids], owner);
  return [...pids];
}

/** The last lines of a node's log, for an error message. */
export function readTail(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-3).join(" ").slice(-300);
  } catch {
    return "";
  }
}

/** pid → parent pid of every live process, from /proc/<pid>/stat, read asynchronously. */
async function readParents(): Promise<Map<number, number>> {
  const entries = (await fsp.readdir("/proc")).filter((e) => /^\d+$/.test(e));
  const parentOf = new Map<number, number>();
  await Promise.all(
    entries.map(async (e) => {
      const stat = await fsp.readFile(`/proc/${e}/stat`, "latin1").catch(() => "");
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // state ppid …
      if (rest.length > 1 && rest[0] !== "Z" && rest[0] !== "X") parentOf.set(Number(e), Number(rest[1]));
    }),
  );
  return parentOf;
}

/** Nodes starting and stopping together share one read of the process table (a read is one file per process). */
const processParents = freshRead(readParents);

/**
 * `root` and every live process below it, from the parent pid of each process. A sandbox's daemons are re-parented
 * to the sandbox's init, which stays below the spawned root.
 */
export async function descendants(root: number): Promise<number[]> {
  const parentOf = await processParents();
  const out = parentOf.has(root) ? [root] : [];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parentOf) if (ppid === out[i]) out.push(pid);
  return out.sort((a, b) => a - b);
}
