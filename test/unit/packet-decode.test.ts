import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeFrame } from "../../src/emulation/runtime/packet-decode.js";
import { FEED_RING, PacketFeed } from "../../src/emulation/runtime/packet-feed.js";
import { DATA_LINK_TYPES, PcapWriter } from "../../src/emulation/runtime/pcap.js";

/**
 * Frames captured on a link between two vpcs 0.5b2 (PC1 10.0.0.1 with MAC 00:50:79:66:68:00, PC2 10.0.0.2 with
 * :01): `ping 10.0.0.2 -c 1`, then the same with `-P 17 -p 5000` (UDP) and `-P 6 -p 80` (TCP).
 */
const frames = {
  ipv6Nd: "33330000000200507966680086dd6000000000083aff00000000000000000000000000000000ff02000000000000000000000000000285007bb800000000",
  arpRequest:
    "ffffffffffff005079666800080600010800060400010050796668000a000001ffffffffffff0a00000200000000000000000000000000000000000000000000",
  arpReply: "005079666800005079666801080600010800060400020050796668010a0000020050796668000a00000100000000000000000000000000000000000000000000",
  echoRequest:
    "00507966680100507966680008004500005ccd0e4000400159900a0000010a0000020800042d0ecd000108090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f4041424344454647",
  echoReply:
    "00507966680000507966680108004500005ccd0e4000400159900a0000020a00000100000c2d0ecd000108090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f4041424344454647",
  udp: "00507966680100507966680008004500005ccd0f40004011597f0a0000010a000002cff8138800485f400050796668000e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f4041424344454647",
  tcpSyn:
    "00507966680100507966680008004500003ccd104000400659a90a0000010a000002291700507bbe7c9e00000000a0020b68d1c40000020405b40101080a6b03cd100000000001030301",
  tcpSynAck: "005079666800005079666801080045000028cd104000400659bd0a0000020a000001005029176b9582e57bbe7c9f50120b68801a0000",
};
const hex = (h: string) => Buffer.from(h, "hex");
const PC1 = "00:50:79:66:68:00";
const PC2 = "00:50:79:66:68:01";

/** The frame with an 802.1Q tag inserted after the MACs, as a dot1q switch port sends it. */
const tagged = (frame: Buffer, vlan: number) => Buffer.concat([frame.subarray(0, 12), Buffer.from([0x81, 0x00, vlan >> 8, vlan & 0xff]), frame.subarray(12)]);

describe("decodeFrame on frames captured from vpcs", () => {
  it("ARP request and reply: operation, sender and target", () => {
    const req = decodeFrame(hex(frames.arpRequest));
    expect(req.ethernet).toEqual({ src: PC1, dst: "ff:ff:ff:ff:ff:ff", etherType: 0x0806, vlan: null });
    expect(req.arp).toEqual({ operation: 1, senderMac: PC1, senderIp: "10.0.0.1", targetMac: "ff:ff:ff:ff:ff:ff", targetIp: "10.0.0.2" });
    expect(req.ipv4).toBeNull();
    const reply = decodeFrame(hex(frames.arpReply));
    expect(reply.arp).toEqual({ operation: 2, senderMac: PC2, senderIp: "10.0.0.2", targetMac: PC1, targetIp: "10.0.0.1" });
  });

  it("ICMP echo request and reply: addresses, protocol, type and code", () => {
    const req = decodeFrame(hex(frames.echoRequest));
    expect(req.ethernet).toEqual({ src: PC1, dst: PC2, etherType: 0x0800, vlan: null });
    expect(req.ipv4).toEqual({ protocol: 1, src: "10.0.0.1", dst: "10.0.0.2", ttl: 64, fragmentOffset: 0 });
    expect(req.icmp).toEqual({ type: 8, code: 0 });
    expect([req.tcp, req.udp, req.arp]).toEqual([null, null, null]);
    const reply = decodeFrame(hex(frames.echoReply));
    expect(reply.ethernet).toMatchObject({ src: PC2, dst: PC1 });
    expect(reply.ipv4).toMatchObject({ src: "10.0.0.2", dst: "10.0.0.1" });
    expect(reply.icmp).toEqual({ type: 0, code: 0 });
  });

  it("UDP and TCP: ports, and TCP flags", () => {
    const udp = decodeFrame(hex(frames.udp));
    expect(udp.ipv4?.protocol).toBe(17);
    expect(udp.udp).toEqual({ srcPort: 53240, dstPort: 5000 });
    expect(decodeFrame(hex(frames.tcpSyn)).tcp).toEqual({ srcPort: 10519, dstPort: 80, flags: ["SYN"] });
    expect(decodeFrame(hex(frames.tcpSynAck)).tcp).toEqual({ srcPort: 80, dstPort: 10519, flags: ["SYN", "ACK"] });
  });

  it("an 802.1Q tag gives the VLAN and the inner EtherType; the layers above still decode", () => {
    const d = decodeFrame(tagged(hex(frames.echoRequest), 42));
    expect(d.ethernet).toEqual({ src: PC1, dst: PC2, etherType: 0x0800, vlan: 42 });
    expect(d.icmp).toEqual({ type: 8, code: 0 });
  });

  it("other EtherTypes (IPv6 here) keep only the Ethernet header", () => {
    expect(decodeFrame(hex(frames.ipv6Nd))).toEqual({
      ethernet: { src: PC1, dst: "33:33:00:00:00:02", etherType: 0x86dd, vlan: null },
      arp: null,
      ipv4: null,
      icmp: null,
      tcp: null,
      udp: null,
    });
  });

  it("truncated or corrupt frames decode as far as they are whole, never throw", () => {
    const full = hex(frames.tcpSyn);
    for (let n = 0; n <= full.length; n++) expect(() => decodeFrame(full.subarray(0, n))).not.toThrow();
    expect(decodeFrame(full.subarray(0, 13)).ethernet).toBeNull();
    expect(decodeFrame(full.subarray(0, 30)).ipv4).toBeNull(); // the IPv4 header is cut
    const cut = decodeFrame(full.subarray(0, 14 + 20 + 10)); // the TCP header is cut before the flags
    expect(cut.ipv4?.protocol).toBe(6);
    expect(cut.tcp).toBeNull();
    const badVersion = hex(frames.echoRequest);
    badVersion[14] = 0x65;
    expect(decodeFrame(badVersion).ipv4).toBeNull();
    const fragment = hex(frames.udp);
    fragment.writeUInt16BE(0x00b9, 20); // offset 185 * 8 bytes
    expect(decodeFrame(fragment)).toMatchObject({ ipv4: { fragmentOffset: 1480 }, udp: null });
  });

  it("non-Ethernet captures get no layers", () => {
    expect(decodeFrame(hex(frames.echoRequest), DATA_LINK_TYPES.DLT_PPP_SERIAL).ethernet).toBeNull();
  });
});

describe("PacketFeed: a ring shared by readers, positions as cursors", () => {
  const writer = () => new PcapWriter(path.join(fs.mkdtempSync(path.join(os.tmpdir(), "feed-")), "c.pcap"));

  it("delivers exactly what the capture writes, numbered as in the file, and ends when the capture stops", async () => {
    const w = writer();
    w.write(hex(frames.arpRequest)); // before the feed: not in the ring, but numbering follows the file
    const feed = PacketFeed.of(w);
    expect(PacketFeed.of(w)).toBe(feed);
    const reader = feed.read(undefined);
    const first = reader.next();
    w.write(hex(frames.echoRequest), 1_700_000_000_123);
    w.write(hex(frames.echoReply));
    w.close();
    const a = (await first).value!;
    expect(a).toMatchObject({ number: 2, dropped: 0, time: 1_700_000_000_123, capturedLength: 106, length: 106, icmp: { type: 8 } });
    expect(a.cursor).toBe(`${feed.id}-2`);
    expect((await reader.next()).value).toMatchObject({ number: 3, dropped: 0, icmp: { type: 0 } });
    expect((await reader.next()).done).toBe(true);
  });

  it("resumes after a cursor; a cursor of another capture starts from the oldest packet held", async () => {
    const w = writer();
    const feed = PacketFeed.of(w);
    for (let i = 0; i < 5; i++) w.write(hex(frames.udp));
    w.close();
    const numbers = async (after: number | "held" | undefined) => {
      const out: number[] = [];
      for await (const p of feed.read(after)) out.push(p.number);
      return out;
    };
    expect(await numbers(feed.positionOf(`${feed.id}-3`))).toEqual([4, 5]);
    expect(feed.positionOf("1-3")).toBeUndefined();
    expect(await numbers("held")).toEqual([1, 2, 3, 4, 5]);
    expect(await numbers(99)).toEqual([]); // a cursor past the end: nothing missed
  });

  it("a reader lapped by the writer skips to the oldest held and counts what it missed", async () => {
    const w = writer();
    const feed = PacketFeed.of(w);
    const reader = feed.read(undefined);
    const total = FEED_RING * 2 + 10;
    for (let i = 0; i < total; i++) w.write(hex(frames.udp));
    w.close();
    expect(feed.stats()).toMatchObject({ retained: FEED_RING, last: total });
    const got: { number: number; dropped: number }[] = [];
    for await (const p of reader) got.push({ number: p.number, dropped: p.dropped });
    expect(got).toHaveLength(FEED_RING);
    expect(got[0]).toEqual({ number: total - FEED_RING + 1, dropped: total - FEED_RING });
    expect(got.slice(1).every((p) => p.dropped === 0)).toBe(true);
    expect(feed.stats()).toMatchObject({ readers: 0, dropped: total - FEED_RING });
  });

  it("a waiting reader ends when its signal aborts", async () => {
    const w = writer();
    const ctrl = new AbortController();
    const reader = PacketFeed.of(w).read(undefined, ctrl.signal);
    const pending = reader.next();
    expect(PacketFeed.of(w).stats().readers).toBe(1);
    ctrl.abort();
    expect((await pending).done).toBe(true);
    expect(PacketFeed.of(w).stats().readers).toBe(0);
    w.close();
  });
});
