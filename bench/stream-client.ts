/**
 * A lean streaming client for the fan-out benchmark: one TCP socket per subscriber that speaks just enough HTTP/1.1
 * and WebSocket (RFC 6455) to open a stream, then only timestamps and keeps what it reads. Decoding (HTTP chunked
 * framing, WebSocket frames, the messages themselves) waits until asked. The subscribers run on the same 2 cores as
 * the server: with the http and ws client libraries each read cost the client ~10-20 µs, so 1,000 subscribers took
 * more CPU than the server they measured.
 */
import crypto from "node:crypto";
import net from "node:net";

/**
 * Where every subscriber of a process keeps the bytes it read: copied into large chunks, so that each read's Buffer
 * dies young. Keeping a million of them alive made the subscribers' garbage collector pause for tens of
 * milliseconds at a time, which the bench then counted as the server's latency.
 */
const ARENA_CHUNK = 64 * 1024 * 1024;
const arena: Buffer[] = [];
let arenaUsed = ARENA_CHUNK;

/** Copies `data` into the arena; returns where it is (chunk * ARENA_CHUNK + offset). */
function keep(data: Buffer): number {
  if (arenaUsed + data.length > ARENA_CHUNK) {
    arena.push(Buffer.allocUnsafe(Math.max(ARENA_CHUNK, data.length)));
    arenaUsed = 0;
  }
  data.copy(arena[arena.length - 1], arenaUsed);
  arenaUsed += data.length;
  return (arena.length - 1) * ARENA_CHUNK + arenaUsed - data.length;
}

const kept = (at: number, length: number) => arena[Math.floor(at / ARENA_CHUNK)].subarray(at % ARENA_CHUNK, (at % ARENA_CHUNK) + length);

/** One socket's reads: the time each read completed and where its bytes are, decoded on demand into messages. */
export class RecordedStream {
  /** Time, arena position, length: three numbers per read. */
  private reads: number[] = [];
  private readonly decoder: FrameDecoder;

  constructor(
    readonly socket: net.Socket,
    framing: "http" | "websocket",
  ) {
    this.decoder = framing === "http" ? new HttpBodyDecoder() : new WebSocketDecoder();
  }

  /** Whether the response head has been decoded. */
  get headDecoded(): boolean {
    return !this.decoder.inHead;
  }

  record(data: Buffer): void {
    this.reads.push(performance.timeOrigin + performance.now(), keep(data), data.length);
  }

  /** Decodes what was read since the last call: each payload (a body piece, a WebSocket text message) with the time of the read that completed it. */
  drain(onPayload: (payload: Buffer, at: number) => void): void {
    const reads = this.reads;
    this.reads = [];
    for (let i = 0; i < reads.length; i += 3) this.decoder.push(kept(reads[i + 1], reads[i + 2]), (p) => onPayload(p, reads[i]));
  }
}

interface FrameDecoder {
  readonly inHead: boolean;
  push(data: Buffer, onPayload: (payload: Buffer) => void): void;
}

/** Bytes not consumed yet, after an HTTP response head (a 101 for a WebSocket, a 200 for a stream). */
abstract class AfterHead implements FrameDecoder {
  protected pending: Buffer = Buffer.alloc(0);
  inHead = true;

  push(data: Buffer, onPayload: (payload: Buffer) => void): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, data]) : data;
    if (this.inHead) {
      const end = this.pending.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = this.pending.subarray(0, end).toString("latin1");
      if (!/^HTTP\/1\.1 (101|200) /.test(head)) throw new Error(`unexpected response: ${head.split("\r\n")[0]}`);
      this.onHead(head);
      this.inHead = false;
      this.pending = this.pending.subarray(end + 4);
    }
    this.consume(onPayload);
  }

  protected onHead(_head: string): void {}
  protected abstract consume(onPayload: (payload: Buffer) => void): void;
}

/** A streamed HTTP response body: chunked (each chunk's data), or the bytes as they come. */
class HttpBodyDecoder extends AfterHead {
  private chunked = false;
  private size = -1;

  protected override onHead(head: string): void {
    this.chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
  }

  protected consume(onPayload: (payload: Buffer) => void): void {
    if (!this.chunked) {
      if (this.pending.length) onPayload(this.pending);
      this.pending = Buffer.alloc(0);
      return;
    }
    for (;;) {
      if (this.size < 0) {
        const eol = this.pending.indexOf("\r\n");
        if (eol < 0) return;
        this.size = parseInt(this.pending.subarray(0, eol).toString("latin1"), 16);
        this.pending = this.pending.subarray(eol + 2);
      }
      if (this.pending.length < this.size + 2) return;
      if (this.size > 0) onPayload(this.pending.subarray(0, this.size));
      this.pending = this.pending.subarray(this.size + 2);
      this.size = -1;
    }
  }
}

/** Server-to-client WebSocket frames (unmasked): the payload of each text frame. */
class WebSocketDecoder extends AfterHead {
  protected consume(onPayload: (payload: Buffer) => void): void {
    for (;;) {
      if (this.pending.length < 2) return;
      let length = this.pending[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.pending.length < 4) return;
        length = this.pending.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.pending.length < 10) return;
        length = Number(this.pending.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.pending.length < offset + length) return;
      if ((this.pending[0] & 0x0f) === 1) onPayload(this.pending.subarray(offset, offset + length));
      this.pending = this.pending.subarray(offset + length);
    }
  }
}

/** A client's text frame: masked, as RFC 6455 requires of clients. */
export function clientTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = crypto.randomBytes(4);
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, 0x80 | n]) : Buffer.from([0x81, 0x80 | 126, n >> 8, n & 0xff]);
  for (let i = 0; i < n; i++) payload[i] ^= mask[i & 3];
  return Buffer.concat([head, mask, payload]);
}

/**
 * Opens `path` on 127.0.0.1:`port` as a GET (framing "http") or a WebSocket upgrade (framing "websocket", with
 * `protocol` if given) and records every read. With `greeting`, that is written once the response head is in and
 * `handshake` sees the decoded payloads as they arrive until it returns true (graphql-ws: connection_init, the ack,
 * then subscribe); recording starts after it. Resolves once the stream is open (and the handshake done).
 */
export function openRecordedStream(
  port: number,
  path: string,
  framing: "http" | "websocket",
  options: { headers?: Record<string, string>; protocol?: string; greeting?: Buffer; handshake?: (payload: Buffer, socket: net.Socket) => boolean } = {},
): Promise<RecordedStream> {
  const headers: Record<string, string> = { Host: `127.0.0.1:${port}`, ...options.headers };
  if (framing === "websocket") {
    Object.assign(headers, { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": crypto.randomBytes(16).toString("base64") });
    if (options.protocol) headers["Sec-WebSocket-Protocol"] = options.protocol;
  }
  const request = `GET ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    const stream = new RecordedStream(socket, framing);
    socket.on("error", reject);
    let open = false;
    socket.on("data", (data: Buffer) => {
      stream.record(data);
      if (open) return;
      if (!options.handshake) {
        open = true;
        return resolve(stream);
      }
      try {
        const greet = !stream.headDecoded;
        stream.drain((payload) => {
          if (!open && options.handshake!(payload, socket)) {
            open = true;
            resolve(stream);
          }
        });
        if (greet && stream.headDecoded && options.greeting) socket.write(options.greeting);
      } catch (e) {
        reject(e);
      }
    });
  });
}
