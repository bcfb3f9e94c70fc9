import fsp from "node:fs/promises";
import { freshRead } from "../../platform/fresh-read.js";

/**
 * Whether one of `pids` (or of those the function finds) listens on TCP `port`, read from /proc: the inodes of the
 * listening sockets on that port (/proc/net/tcp and tcp6) against the socket descriptors of the processes. Deliberately not a connection: the
 * vpcs console server relays what the PC prints to whichever client is connected, so a probe connection that
 * is still open when the PC prints its banner and first prompt swallows them, and the first real console
 * session then waits for a prompt that never comes (a loaded host makes the probe slow enough to hit that).
 */
export async function listensOn(pids: number[] | (() => Promise<number[]>), port: number): Promise<boolean> {
  const inodes = (await listeningSockets()).get(port);
  if (!inodes) return false;
  // Asked for only once something listens: finding a node's pids reads /proc.
  for (const pid of typeof pids === "function" ? await pids() : pids) {
    if ((await socketInodes(pid)).some((inode) => inodes.has(inode))) return true;
  }
  return false;
}

/**
 * Listening TCP port → socket inodes. Read asynchronously: the kernel prints every socket of the host into these
 * tables, slow with many connections; consoles waited for together share one read.
 */
const listeningSockets = freshRead(async () => {
  const out = new Map<number, Set<string>>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await fsp.readFile(table, "latin1").catch(() => "");
    // Columns: sl local_address rem_address st ... inode (10th); addresses are HEXIP:HEXPORT, LISTEN is 0A.
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length <= 9 || f[3] !== "0A") continue;
      const port = parseInt(f[1].split(":")[1], 16);
      let inodes = out.get(port);
      if (!inodes) out.set(port, (inodes = new Set()));
      inodes.add(f[9]);
    }
  }
  return out;
});

/** The inodes of the sockets a process holds (its /proc/<pid>/fd links). */
export async function socketInodes(pid: number): Promise<string[]> {
  const fds = await fsp.readdir(`/proc/${pid}/fd`).catch(() => []);
  const links = await Promise.all(fds.map((fd) => fsp.readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")));
  return links.flatMap((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1] ?? []);
}
