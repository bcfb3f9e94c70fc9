import { decodeFrame, type PacketSummary } from "./packet-decode.js";
import type { PcapWriter } from "./pcap.js";

/**
 * The live packet view of one capture: every record the capture writes (its PcapWriter's `data` events, so
 * exactly what the pcap file gets), decoded once into a ring of the last FEED_RING summaries shared by all
 * readers. A reader is a position in that ring, so a slow reader costs nothing per packet and its backlog is
 * bounded by the ring: when the writer laps it, it skips to the oldest packet still held (drop oldest — a live
 * view wants what happens now) and the next packet it receives says how many it missed (`dropped`). The same
 * position is what a cursor names, which is how a reader resumes after a reconnect.
 *
 * A feed is made on first use and lives as long as its capture; the packets before it are not in the ring.
 */
export const FEED_RING = 1024;

export interface FeedPacket extends PacketSummary {
  /** The frame's number in the capture file (1-based, as Wireshark numbers them). */
  number: number;
  /** Capture time, milliseconds since the epoch (the record's timestamp). */
  time: number;
  capturedLength: number;
  length: number;
}

export interface DeliveredPacket extends FeedPacket {
  /** `<feed id>-<number>`: pass as `after` to resume after this packet. */
  cursor: string;
  /** Packets of this capture between the previous one this reader received (or its `after`) and this one. */
  dropped: number;
}

/** Ids unique within the process (capture start time, bumped on a tie), so a cursor names its capture. */
let lastFeedId = 0;
const nextFeedId = () => (lastFeedId = Math.max(Date.now(), lastFeedId + 1));

const feeds = new WeakMap<PcapWriter, PacketFeed>();

export class PacketFeed {
  readonly id = String(nextFeedId());
  private readonly ring: (FeedPacket | undefined)[] = new Array(FEED_RING);
  /** Number of the newest packet seen; the ring holds (max(first, last - FEED_RING + 1) .. last]. */
  private last: number;
  private readonly first: number;
  private ended: boolean;
  private wakers = new Set<() => void>();
  /** Where each reader is (the number of the last packet it was given). */
  private readers = new Set<{ at: number }>();
  private skipped = 0;

  /** The feed of a capture, made on first use. */
  static of(writer: PcapWriter): PacketFeed {
    let feed = feeds.get(writer);
    if (!feed) feeds.set(writer, (feed = new PacketFeed(writer)));
    return feed;
  }

  private constructor(private readonly writer: PcapWriter) {
    this.last = writer.packets;
    this.first = writer.packets + 1;
    this.ended = !writer.open;
    const onData = (record: Buffer) => this.add(record);
    writer.on("data", onData);
    writer.once("close", () => {
      writer.off("data", onData);
      this.ended = true;
      this.wake();
    });
  }

  /** One pcap record: 16-byte header (seconds, microseconds, captured length, original length), then the bytes. */
  private add(record: Buffer): void {
    const number = ++this.last;
    this.ring[number % FEED_RING] = {
      number,
      time: record.readUInt32LE(0) * 1000 + Math.floor(record.readUInt32LE(4) / 1000),
      capturedLength: record.readUInt32LE(8),
      length: record.readUInt32LE(12),
      ...decodeFrame(record.subarray(16), this.writer.linktype),
    };
    this.wake();
  }

  private wake(): void {
    const wakers = [...this.wakers];
    this.wakers.clear();
    for (const w of wakers) w();
  }

  private get oldest(): number {
    return Math.max(this.first, this.last - FEED_RING + 1);
  }

  /** The number a cursor of this feed names; undefined for a cursor of another capture. */
  positionOf(cursor: string): number | undefined {
    const [feed, number] = cursor.split("-");
    return feed === this.id ? Number(number) : undefined;
  }

  /**
   * For diagnostics and tests: what the ring holds, how many read it, the most packets a reader has yet to read
   * (beyond FEED_RING it has been lapped), how many packets readers skipped.
   */
  stats() {
    const backlog = Math.max(0, ...[...this.readers].map((r) => this.last - r.at));
    return { retained: this.last - this.oldest + 1, readers: this.readers.size, backlog, dropped: this.skipped, last: this.last };
  }

  /**
   * The packets after `after` (a number; a cursor of another capture → everything still held), or from now on,
   * until the capture stops (then the rest is drained and the stream ends) or `signal` aborts.
   */
  read(after: number | "held" | undefined, signal?: AbortSignal): AsyncGenerator<DeliveredPacket> {
    // Decided now, not at the first pull: "from now on" is the moment of the call. Clamped to what this feed
    // saw: a gap before its first packet or after its newest is no loss.
    const start = after === "held" ? this.first - 1 : Math.max(this.first - 1, Math.min(after ?? this.last, this.last));
    return this.stream(start, signal);
  }

  private async *stream(start: number, signal?: AbortSignal): AsyncGenerator<DeliveredPacket> {
    const reader = { at: start };
    this.readers.add(reader);
    try {
      while (!signal?.aborted) {
        if (reader.at >= this.last) {
          if (this.ended) return;
          await this.change(signal);
          continue;
        }
        const number = Math.max(reader.at + 1, this.oldest);
        const packet = this.ring[number % FEED_RING]!;
        const dropped = number - reader.at - 1;
        this.skipped += dropped;
        reader.at = number;
        yield { ...packet, cursor: `${this.id}-${number}`, dropped };
      }
    } finally {
      this.readers.delete(reader);
    }
  }

  private change(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.wakers.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.wakers.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
