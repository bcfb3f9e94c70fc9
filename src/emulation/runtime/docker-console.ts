import net from "node:net";

/**
 * The telnet console of a docker node (compat-docker §2.6): a telnet server on the node's console port joined to
 * the container's TTY (one `attach` stream). It negotiates as gns3-server does (WILL ECHO, WILL SGA, WILL BINARY,
 * DO BINARY, DO NAWS), greets with `<name> console is now available... Press RETURN to get started.`, keeps what
 * the container printed while no client was connected (the last 64 KiB) for the next client, and shares the
 * stream between clients. Window sizes (NAWS) resize the container's TTY.
 */
const IAC = 255, DONT = 254, DO = 253, WONT = 252, WILL = 251, SB = 250, SE = 240;
const ECHO = 1, SGA = 3, BINARY = 0, NAWS = 31;
const BACKLOG = 64 * 1024;

export interface ConsoleStream {
  write(data: Buffer): void;
  on(event: "data", fn: (chunk: Buffer) => void): unknown;
  on(event: "end" | "close", fn: () => void): unknown;
  destroy?(): void;
  end?(): void;
}

export class DockerTelnetConsole {
  private server?: net.Server;
  private clients = new Set<net.Socket>();
  private backlog: Buffer[] = [];
  private backlogSize = 0;

  constructor(
    private readonly name: string,
    private readonly stream: ConsoleStream,
    private readonly resize: (cols: number, rows: number) => void,
  ) {
    stream.on("data", (chunk: Buffer) => this.output(chunk));
  }

  async listen(host: string, port: number): Promise<void> {
    const server = net.createServer((socket) => this.client(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port, exclusive: true }, () => resolve());
    });
    server.on("error", () => {});
    this.server = server;
  }

  private output(chunk: Buffer): void {
    // Telnet: a 0xff byte of the output is sent doubled.
    const data = chunk.includes(IAC) ? Buffer.from(chunk.toString("latin1").replaceAll("\xff", "\xff\xff"), "latin1") : chunk;
    if (!this.clients.size) {
      this.backlog.push(data);
      this.backlogSize += data.length;
      while (this.backlogSize > BACKLOG && this.backlog.length > 1) this.backlogSize -= this.backlog.shift()!.length;
      return;
    }
    for (const c of this.clients) c.write(data);
  }

  private client(socket: net.Socket): void {
    socket.setNoDelay(true);
    socket.on("error", () => {});
    socket.write(Buffer.from([IAC, WILL, ECHO, IAC, WILL, SGA, IAC, WILL, BINARY, IAC, DO, BINARY, IAC, DO, NAWS]));
    socket.write(`${this.name} console is now available... Press RETURN to get started.\r\n`);
    if (this.backlog.length) {
      socket.write(Buffer.concat(this.backlog));
      this.backlog = [];
      this.backlogSize = 0;
    }
    this.clients.add(socket);
    const parser = new TelnetParser(
      (data) => this.stream.write(data),
      (cols, rows) => this.resize(cols, rows),
    );
    socket.on("data", (chunk: Buffer) => parser.feed(chunk));
    socket.on("close", () => this.clients.delete(socket));
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.destroy();
    this.clients.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    this.stream.destroy?.();
  }
}

/** Separates the data a client types from its telnet commands (option negotiation, NAWS window sizes). */
class TelnetParser {
  private state: "data" | "iac" | "option" | "sb" | "sb-iac" = "data";
  private sub: number[] = [];

  constructor(
    private readonly onData: (data: Buffer) => void,
    private readonly onSize: (cols: number, rows: number) => void,
  ) {}

  feed(chunk: Buffer): void {
    const out: number[] = [];
    for (const b of chunk) {
      switch (this.state) {
        case "data":
          if (b === IAC) this.state = "iac";
          else if (b !== 0) out.push(b); // CR NUL → CR
          break;
        case "iac":
          if (b === IAC) {
            out.push(IAC);
            this.state = "data";
          } else if (b === SB) {
            this.sub = [];
            this.state = "sb";
          } else if (b === DO || b === DONT || b === WILL || b === WONT) this.state = "option";
          else this.state = "data";
          break;
        case "option":
          this.state = "data";
          break;
        case "sb":
          if (b === IAC) this.state = "sb-iac";
          else if (this.sub.length < 64) this.sub.push(b);
          break;
        case "sb-iac":
          if (b === SE) {
            if (this.sub[0] === NAWS && this.sub.length >= 5) this.onSize((this.sub[1] << 8) | this.sub[2], (this.sub[3] << 8) | this.sub[4]);
            this.state = "data";
          } else {
            if (b === IAC && this.sub.length < 64) this.sub.push(IAC);
            this.state = "sb";
          }
          break;
      }
    }
    if (out.length) this.onData(Buffer.from(out));
  }
}
