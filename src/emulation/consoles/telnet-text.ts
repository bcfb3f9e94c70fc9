/**
 * A telnet byte stream as text, chunk by chunk: telnet commands removed (IAC WILL/WONT/DO/DONT <option>, IAC SB …
 * IAC SE, other IAC <command>; IAC IAC is a data byte 0xff), the rest decoded as UTF-8. State carries over between
 * chunks, so a command or a character split by the network is handled whole.
 */
const IAC = 0xff;
const SB = 250;
const SE = 240;

export class TelnetText {
  private state: "data" | "iac" | "option" | "sub" | "sub-iac" = "data";
  private readonly decoder = new TextDecoder("utf-8");

  decode(chunk: Uint8Array): string {
    const out: number[] = [];
    for (const byte of chunk) {
      switch (this.state) {
        case "data":
          if (byte === IAC) this.state = "iac";
          else out.push(byte);
          break;
        case "iac":
          if (byte === IAC) {
            out.push(IAC);
            this.state = "data";
          } else if (byte >= 251) this.state = "option"; // WILL, WONT, DO, DONT: one option byte follows
          else if (byte === SB) this.state = "sub";
          else this.state = "data"; // NOP, GA, … : a command of its own
          break;
        case "option":
          this.state = "data";
          break;
        case "sub":
          if (byte === IAC) this.state = "sub-iac";
          break;
        case "sub-iac":
          this.state = byte === SE ? "data" : "sub";
          break;
      }
    }
    return this.decoder.decode(Uint8Array.from(out), { stream: true });
  }
}
