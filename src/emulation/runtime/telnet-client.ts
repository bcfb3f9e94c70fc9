import net from "node:net";

/**
 * A minimal telnet client for node consoles (tests, benchmarks, health checks): strips IAC negotiation, collects
 * text, and runs a command until the prompt comes back.
 */
export class TelnetClient {
  private text = "";
  private waiters: (() => void)[] = [];

  private constructor(private readonly socket: net.Socket) {
    socket.on("data", (d: Buffer) => {
      this.text += stripTelnet(d);
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on("error", () => {});
  }

  static connect(port: number, host = "127.0.0.1", timeoutMs = 5000): Promise<TelnetClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, host);
      const t = setTimeout(() => {
        s.destroy();
        reject(new Error(`console ${host}:${port} did not answer`));
      }, timeoutMs);
      s.once("connect", () => {
        clearTimeout(t);
        resolve(new TelnetClient(s));
      });
      s.once("error", (e) => {
        clearTimeout(t);
        reject(e);
      });
    });
  }

  get output(): string {
    return this.text;
  }

  /** Waits until the output (from `from` on) matches `re`; returns that part of the output. */
  async waitFor(re: RegExp, timeoutMs = 10_000, from = 0): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const part = this.text.slice(from);
      if (re.test(part)) return part;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timeout waiting for ${re} in console output: ${JSON.stringify(part.slice(-400))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Sends text as it is, without waiting for anything. */
  send(text: string): void {
    this.socket.write(text);
  }

  /** Sends a line and waits for the next prompt (`VPCS> ` by default); returns what the command printed. */
  async run(command: string, timeoutMs = 15_000, prompt = /\n\r?\w*>\s*$/): Promise<string> {
    const from = this.text.length;
    this.send(`${command}\n`);
    return this.waitFor(prompt, timeoutMs, from);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Removes telnet IAC commands (IAC x y for WILL/WONT/DO/DONT, IAC SB ... IAC SE, IAC IAC → 0xff). */
function stripTelnet(d: Buffer): string {
  const out: number[] = [];
  for (let i = 0; i < d.length; i++) {
    const c = d[i];
    if (c !== 0xff) {
      out.push(c);
      continue;
    }
    const cmd = d[i + 1];
    if (cmd === 0xff) {
      out.push(0xff);
      i++;
    } else if (cmd >= 251 && cmd <= 254) i += 2;
    else if (cmd === 250) {
      const end = d.indexOf(Buffer.from([0xff, 240]), i);
      i = end < 0 ? d.length : end + 1;
    } else i++;
  }
  return Buffer.from(out).toString("latin1");
}
