import type { ServerResponse } from "node:http";

/**
 * Wire framing of one stream message, made once and written as is to every socket that carries it (see
 * coalesced-writes.ts): a notification goes to hundreds of streams, and framing it per socket (what res.write and
 * ws.send do) costs more than the write that follows.
 */

const CRLF = Buffer.from("\r\n");

/** One chunk of a chunked HTTP/1.1 response body. */
function httpChunk(payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`, "latin1"), payload, CRLF]);
}

/**
 * One message of streamed HTTP responses (written past `res` once its head is out): a chunk of the chunked body,
 * or the bytes as they are for an HTTP/1.0 client, whose body runs until the connection closes.
 */
export class StreamedBody {
  private chunk: Buffer | undefined;

  constructor(private readonly bytes: Buffer) {}

  for(res: ServerResponse): Buffer {
    return res.chunkedEncoding ? (this.chunk ??= httpChunk(this.bytes)) : this.bytes;
  }
}

/** One WebSocket text frame as a server sends it: final, unmasked, uncompressed (RFC 6455 §5.2). */
export function webSocketTextFrame(payload: Buffer): Buffer {
  const n = payload.length;
  // The length in 7 bits, or 126 and 16 bits, or 127 and 64 bits.
  const head = Buffer.alloc(n < 126 ? 2 : n < 0x10000 ? 4 : 10);
  head[0] = 0x81;
  if (n < 126) {
    head[1] = n;
  } else if (n < 0x10000) {
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}
