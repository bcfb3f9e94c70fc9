import { DATA_LINK_TYPES } from "./pcap.js";

/**
 * Summaries of captured frames, for the live packet view (packet-feed.ts): the Ethernet header (with one
 * 802.1Q tag), ARP, and IPv4 with ICMP type/code or TCP/UDP ports. Pure and defensive: a frame is whatever
 * crossed the wire (a node may send anything, `corrupt` flips bytes), so every read is bounds-checked and a
 * layer that does not fit is left out, never guessed.
 */
export interface EthernetSummary {
  src: string;
  dst: string;
  /** The EtherType after the VLAN tag, if any (0x0800 IPv4, 0x0806 ARP, 0x86dd IPv6...); below 0x0600 a length. */
  etherType: number;
  /** The 802.1Q VLAN id when the frame is tagged. */
  vlan: number | null;
}

export interface ArpSummary {
  /** 1 request, 2 reply. */
  operation: number;
  senderMac: string;
  senderIp: string;
  targetMac: string;
  targetIp: string;
}

export interface Ipv4Summary {
  /** IP protocol number (1 ICMP, 6 TCP, 17 UDP...). */
  protocol: number;
  src: string;
  dst: string;
  ttl: number;
  /** Fragments after the first carry no transport header: icmp/tcp/udp stay null for them. */
  fragmentOffset: number;
}

export interface PortsSummary {
  srcPort: number;
  dstPort: number;
}

export interface TcpSummary extends PortsSummary {
  /** Set flags by name, in header order: FIN SYN RST PSH ACK URG ECE CWR. */
  flags: string[];
}

export interface PacketSummary {
  ethernet: EthernetSummary | null;
  arp: ArpSummary | null;
  ipv4: Ipv4Summary | null;
  icmp: { type: number; code: number } | null;
  tcp: TcpSummary | null;
  udp: PortsSummary | null;
}

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_ARP = 0x0806;
const TPID_8021Q = 0x8100;
const TCP_FLAGS = ["FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"];

const mac = (b: Buffer, o: number) => [...b.subarray(o, o + 6)].map((x) => x.toString(16).padStart(2, "0")).join(":");
const ipv4 = (b: Buffer, o: number) => `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;

const EMPTY: PacketSummary = { ethernet: null, arp: null, ipv4: null, icmp: null, tcp: null, udp: null };

/** Decodes what it can of one frame of a capture with the given pcap linktype (only Ethernet has layers here). */
export function decodeFrame(frame: Buffer, linktype: number = DATA_LINK_TYPES.DLT_EN10MB): PacketSummary {
  if (linktype !== DATA_LINK_TYPES.DLT_EN10MB || frame.length < 14) return { ...EMPTY };
  let etherType = frame.readUInt16BE(12);
  let vlan: number | null = null;
  let off = 14;
  if (etherType === TPID_8021Q && frame.length >= 18) {
    vlan = frame.readUInt16BE(14) & 0x0fff;
    etherType = frame.readUInt16BE(16);
    off = 18;
  }
  const out: PacketSummary = { ...EMPTY, ethernet: { src: mac(frame, 6), dst: mac(frame, 0), etherType, vlan } };
  if (etherType === ETHERTYPE_ARP) out.arp = decodeArp(frame, off);
  if (etherType === ETHERTYPE_IPV4) decodeIpv4(frame, off, out);
  return out;
}

/** Ethernet/IPv4 ARP only (hardware type 1, 6-byte MACs, 4-byte addresses). */
function decodeArp(f: Buffer, o: number): ArpSummary | null {
  if (f.length < o + 28 || f.readUInt16BE(o) !== 1 || f.readUInt16BE(o + 2) !== ETHERTYPE_IPV4 || f[o + 4] !== 6 || f[o + 5] !== 4) return null;
  return { operation: f.readUInt16BE(o + 6), senderMac: mac(f, o + 8), senderIp: ipv4(f, o + 14), targetMac: mac(f, o + 18), targetIp: ipv4(f, o + 24) };
}

function decodeIpv4(f: Buffer, o: number, out: PacketSummary): void {
  if (f.length < o + 20 || f[o] >> 4 !== 4) return;
  const headerLength = (f[o] & 0x0f) * 4;
  if (headerLength < 20 || f.length < o + headerLength) return;
  const protocol = f[o + 9];
  const fragmentOffset = (f.readUInt16BE(o + 6) & 0x1fff) * 8;
  out.ipv4 = { protocol, src: ipv4(f, o + 12), dst: ipv4(f, o + 16), ttl: f[o + 8], fragmentOffset };
  if (fragmentOffset !== 0) return;
  const t = o + headerLength;
  if (protocol === 1 && f.length >= t + 2) out.icmp = { type: f[t], code: f[t + 1] };
  if (protocol === 17 && f.length >= t + 4) out.udp = { srcPort: f.readUInt16BE(t), dstPort: f.readUInt16BE(t + 2) };
  if (protocol === 6 && f.length >= t + 14) {
    const bits = f[t + 13];
    out.tcp = { srcPort: f.readUInt16BE(t), dstPort: f.readUInt16BE(t + 2), flags: TCP_FLAGS.filter((_, i) => bits & (1 << i)) };
  }
}
