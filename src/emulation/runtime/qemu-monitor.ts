import net from "node:net";

/**
 * QEMU's machine protocol (QMP) on a unix socket in the run directory, one connection per command as GNS3 does
 * with its HMP monitor (compat-qemu §6). QMP rather than HMP: answers are JSON with a status we can check
 * (`{"return": …}` or `{"error": {"desc": …}}`) instead of screen text, and a unix socket needs no TCP port that
 * another program could take between picking and binding it.
 */
export class QmpError extends Error {}

export function qmp(socketPath: string, execute: string, args?: Record<string, unknown>, timeoutMs = 5000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(socketPath);
    let buffer = "";
    let stage: "greeting" | "capabilities" | "command" = "greeting";
    const fail = (e: Error) => {
      clearTimeout(timer);
      sock.destroy();
      reject(e);
    };
    const timer = setTimeout(() => fail(new QmpError(`QMP ${execute}: no answer within ${timeoutMs} ms`)), timeoutMs);
    const send = (cmd: string, a?: Record<string, unknown>) => sock.write(`${JSON.stringify(a ? { execute: cmd, arguments: a } : { execute: cmd })}\n`);
    sock.on("error", fail);
    sock.on("close", () => fail(new QmpError(`QMP ${execute}: the monitor closed the connection`)));
    sock.on("data", (d) => {
      buffer += d.toString("utf8");
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line) continue;
        let msg: { QMP?: unknown; return?: unknown; error?: { desc?: string }; event?: string };
        try {
          msg = JSON.parse(line);
        } catch {
          return fail(new QmpError(`QMP ${execute}: unreadable answer ${line.slice(0, 200)}`));
        }
        if (msg.event) continue; // asynchronous events (STOP, RESUME, …) interleave with answers
        if (msg.error) return fail(new QmpError(`QMP ${execute}: ${msg.error.desc ?? "error"}`));
        if (stage === "greeting" && msg.QMP) {
          stage = "capabilities";
          send("qmp_capabilities");
        } else if (stage === "capabilities" && "return" in msg) {
          stage = "command";
          send(execute, args);
        } else if (stage === "command" && "return" in msg) {
          clearTimeout(timer);
          sock.removeAllListeners("close");
          sock.end();
          return resolve(msg.return);
        }
      }
    });
  });
}

/** `query-status`'s status: "running", "paused", "prelaunch", "shutdown", … */
export async function qmpStatus(socketPath: string): Promise<string> {
  const r = (await qmp(socketPath, "query-status")) as { status?: string };
  return r.status ?? "unknown";
}
