import { EventEmitter } from "node:events";
import fs from "node:fs";
import path from "node:path";

/** GNS3's data_link_type names → libpcap LINKTYPE values. */
export const DATA_LINK_TYPES = {
  DLT_EN10MB: 1,
  DLT_ATM_RFC1483: 11,
  DLT_PPP_SERIAL: 50,
  DLT_C_HDLC: 104,
  DLT_FRELAY: 107,
} as const;
export type DataLinkType = keyof typeof DATA_LINK_TYPES;

const SNAPLEN = 0xffff;

/** The 24-byte classic pcap global header (little-endian, v2.4, microsecond timestamps). */
export function pcapGlobalHeader(linktype: number): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(0xa1b2c3d4, 0);
  b.writeUInt16LE(2, 4);
  b.writeUInt16LE(4, 6);
  b.writeInt32LE(0, 8); // thiszone
  b.writeUInt32LE(0, 12); // sigfigs
  b.writeUInt32LE(SNAPLEN, 16);
  b.writeUInt32LE(linktype, 20);
  return b;
}

export function pcapRecord(frame: Buffer, when = Date.now()): Buffer {
  const incl = Math.min(frame.length, SNAPLEN);
  const h = Buffer.alloc(16);
  h.writeUInt32LE(Math.floor(when / 1000), 0);
  h.writeUInt32LE((when % 1000) * 1000, 4);
  h.writeUInt32LE(incl, 8);
  h.writeUInt32LE(frame.length, 12);
  return Buffer.concat([h, frame.subarray(0, incl)]);
}

export interface PcapPacket {
  time: number;
  data: Buffer;
}

/** Parses a classic pcap file (either byte order); stops at a truncated trailing record. */
export function parsePcap(buf: Buffer): { linktype: number; packets: PcapPacket[] } {
  if (buf.length < 24) throw new Error("not a pcap file: shorter than the global header");
  const magic = buf.readUInt32LE(0);
  const le = magic === 0xa1b2c3d4;
  if (!le && magic !== 0xd4c3b2a1) throw new Error("not a pcap file: bad magic");
  const u32 = (o: number) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const linktype = u32(20);
  const packets: PcapPacket[] = [];
  let off = 24;
  while (off + 16 <= buf.length) {
    const incl = u32(off + 8);
    if (off + 16 + incl > buf.length) break;
    packets.push({ time: u32(off) * 1000 + u32(off + 4) / 1000, data: buf.subarray(off + 16, off + 16 + incl) });
    off += 16 + incl;
  }
  return { linktype, packets };
}

/**
 * A capture file being written. Records are appended synchronously, so a follower that reads the file and then
 * subscribes in the same tick sees every packet exactly once.
 */
export class PcapWriter extends EventEmitter {
  private fd: number | undefined;
  packets = 0;

  constructor(
    readonly file: string,
    readonly linktype: number = DATA_LINK_TYPES.DLT_EN10MB,
  ) {
    super();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.fd = fs.openSync(file, "w");
    fs.writeSync(this.fd, pcapGlobalHeader(linktype));
  }

  get open(): boolean {
    return this.fd !== undefined;
  }

  write(frame: Buffer, when = Date.now()): void {
    if (this.fd === undefined) return;
    const rec = pcapRecord(frame, when);
    fs.writeSync(this.fd, rec);
    this.packets++;
    this.emit("data", rec);
  }

  close(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
    this.emit("close");
  }

  /**
   * A live view: everything written so far, then each new record, until the capture stops or the consumer
   * returns. Used by `GET L/pcap`.
   */
  async *follow(): AsyncGenerator<Buffer> {
    const queue: Buffer[] = [];
    let wake: (() => void) | undefined;
    let ended = !this.open;
    const onData = (b: Buffer) => {
      queue.push(b);
      wake?.();
    };
    const onClose = () => {
      ended = true;
      wake?.();
    };
    queue.push(fs.readFileSync(this.file));
    this.on("data", onData);
    this.on("close", onClose);
    try {
      for (;;) {
        while (queue.length) yield queue.shift()!;
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    } finally {
      this.off("data", onData);
      this.off("close", onClose);
    }
  }
}
