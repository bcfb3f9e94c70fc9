import fs from "node:fs";

/**
 * Whether one of `pids` (or of those the function finds) listens on TCP `port`, read from /proc: the inodes of the
 * listening sockets on that port (/proc/net/tcp and tcp6) against the socket descriptors of the processes. Deliberately not a connection: the
 * vpcs console server relays what the PC prints to whichever client is connected, so a probe connection that
 * is still open when the PC prints its banner and first prompt swallows them, and the first real console
 * session then waits for a prompt that never comes (a loaded host makes the probe slow enough to hit that).
 */
export function listensOn(pids: number[] | (() => number[]), port: number): boolean {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return false;
  // Asked for only once something listens: finding a node's pids reads every process's environment.
  return (typeof pids === "function" ? pids() : pids).some((pid) => socketInodes(pid).some((inode) => inodes.has(inode)));
}

function listeningInodes(port: number): Set<string> {
  const out = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = fs.readFileSync(table, "latin1");
    } catch {
      continue;
    }
    // Columns: sl local_address rem_address st ... inode (10th); addresses are HEXIP:HEXPORT, LISTEN is 0A.
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === "0A" && parseInt(f[1].split(":")[1], 16) === port) out.add(f[9]);
    }
  }
  return out;
}

function socketInodes(pid: number): string[] {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        return m ? [m[1]] : [];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}
