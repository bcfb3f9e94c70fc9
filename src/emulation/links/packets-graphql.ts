import { InvalidInputError } from "../../platform/core/errors.js";
import { isEventId } from "../../platform/events.js";
import { builder } from "../../platform/graphql/builder.js";
import type { ArpSummary, EthernetSummary, Ipv4Summary, PortsSummary, TcpSummary } from "../runtime/packet-decode.js";
import { type DeliveredPacket, FEED_RING, PacketFeed } from "../runtime/packet-feed.js";
import { CAPTURE_READ_ERRORS, linkCapture } from "./capture.js";
import { linkAddress } from "./graphql.js";

/** `linkPackets`: the decoded frames of a link's running capture, live (packet-feed.ts). */
const EthernetHeader = builder.objectRef<EthernetSummary>("EthernetHeader").implement({
  description: "The Ethernet header of a frame",
  fields: (t) => ({
    src: t.exposeString("src", { description: "Source MAC, aa:bb:cc:dd:ee:ff" }),
    dst: t.exposeString("dst", { description: "Destination MAC, aa:bb:cc:dd:ee:ff (ff:ff:ff:ff:ff:ff: broadcast)" }),
    etherType: t.exposeInt("etherType", { description: "After the 802.1Q tag if any: 2048 IPv4, 2054 ARP, 34525 IPv6" }),
    vlan: t.exposeInt("vlan", { nullable: true, description: "802.1Q VLAN id of a tagged frame" }),
  }),
});

const ArpPacket = builder.objectRef<ArpSummary>("ArpPacket").implement({
  description: "An ARP message: who has an IPv4 address, and the answer",
  fields: (t) => ({
    operation: t.exposeInt("operation", { description: "1 request, 2 reply" }),
    senderMac: t.exposeString("senderMac", { description: "The sender's MAC address" }),
    senderIp: t.exposeString("senderIp", { description: "The sender's IPv4 address" }),
    targetMac: t.exposeString("targetMac", { description: "The target's MAC address (00:00:00:00:00:00 in a request)" }),
    targetIp: t.exposeString("targetIp", { description: "The IPv4 address asked about (request) or answered to (reply)" }),
  }),
});

const Ipv4Header = builder.objectRef<Ipv4Summary>("Ipv4Header").implement({
  description: "The IPv4 header of a packet",
  fields: (t) => ({
    protocol: t.exposeInt("protocol", { description: "1 ICMP, 6 TCP, 17 UDP, ..." }),
    src: t.exposeString("src", { description: "Source IPv4 address" }),
    dst: t.exposeString("dst", { description: "Destination IPv4 address" }),
    ttl: t.exposeInt("ttl", { description: "Time to live: routers the packet may still cross" }),
    fragmentOffsetBytes: t.exposeInt("fragmentOffset", { description: "The fragment's offset in the datagram, in bytes; later fragments have no ICMP/TCP/UDP header" }),
  }),
});

const IcmpHeader = builder.objectRef<{ type: number; code: number }>("IcmpHeader").implement({
  description: "The ICMP header of a packet (ping, unreachable …)",
  fields: (t) => ({
    type: t.exposeInt("type", { description: "8 echo request, 0 echo reply, 3 unreachable, ..." }),
    code: t.exposeInt("code", { description: "The detail of the type (for unreachable: 0 network, 1 host, 3 port …)" }),
  }),
});

const UdpHeader = builder.objectRef<PortsSummary>("UdpHeader").implement({
  description: "The UDP header of a datagram",
  fields: (t) => ({ srcPort: t.exposeInt("srcPort", { description: "Source port" }), dstPort: t.exposeInt("dstPort", { description: "Destination port" }) }),
});

const TcpHeader = builder.objectRef<TcpSummary>("TcpHeader").implement({
  description: "The TCP header of a segment",
  fields: (t) => ({
    srcPort: t.exposeInt("srcPort", { description: "Source port" }),
    dstPort: t.exposeInt("dstPort", { description: "Destination port" }),
    flags: t.exposeStringList("flags", { description: "Set flags: FIN SYN RST PSH ACK URG ECE CWR" }),
  }),
});

const LinkPacket = builder.objectRef<DeliveredPacket>("LinkPacket").implement({
  description: "One frame of a link's capture, as the pcap file records it, decoded",
  fields: (t) => ({
    cursor: t.exposeString("cursor", { description: "Pass as `after` to resume after this packet" }),
    number: t.exposeInt("number", { description: "The frame's number in the capture file (1-based)" }),
    dropped: t.exposeInt("dropped", {
      description: "Packets of this capture this subscriber will not receive between the previous one it received (or `after`) and this one",
    }),
    time: t.field({ type: "DateTime", description: "When the frame was captured", resolve: (p) => new Date(p.time) }),
    capturedLengthBytes: t.exposeInt("capturedLength", { description: "Bytes recorded" }),
    lengthBytes: t.exposeInt("length", { description: "Bytes on the wire" }),
    ethernet: t.field({ type: EthernetHeader, nullable: true, description: "The Ethernet header (null on other link types)", resolve: (p) => p.ethernet }),
    arp: t.field({ type: ArpPacket, nullable: true, description: "The ARP message, if the frame carries one", resolve: (p) => p.arp }),
    ipv4: t.field({ type: Ipv4Header, nullable: true, description: "The IPv4 header, if the frame carries IPv4", resolve: (p) => p.ipv4 }),
    icmp: t.field({ type: IcmpHeader, nullable: true, description: "The ICMP header, if the packet is ICMP", resolve: (p) => p.icmp }),
    tcp: t.field({ type: TcpHeader, nullable: true, description: "The TCP header, if the packet is TCP", resolve: (p) => p.tcp }),
    udp: t.field({ type: UdpHeader, nullable: true, description: "The UDP header, if the packet is UDP", resolve: (p) => p.udp }),
  }),
});

builder.subscriptionField("linkPackets", (t) =>
  t.field({
    type: LinkPacket,
    errors: { types: CAPTURE_READ_ERRORS },
    description:
      `The frames crossing a link while its capture runs (ConflictError when none runs); ends when the capture stops. ` +
      `Resumable from the last ${FEED_RING} packets; a subscriber that falls further behind skips the oldest and \`dropped\` counts them.`,
    args: {
      id: t.arg.id({ required: true, description: "The captured link (its global id, or its GNS3 link_id)" }),
      after: t.arg.string({ description: "Resume after this cursor (a cursor of an earlier capture: from the oldest packet held)" }),
    },
    subscribe: async (_r, args, ctx) => {
      if (args.after != null && !isEventId(args.after)) throw new InvalidInputError(`${args.after} is not a packet cursor`);
      const at = await linkAddress(ctx, args.id);
      const feed = PacketFeed.of(await linkCapture(ctx, at.projectId, at.id));
      const after = args.after == null ? undefined : (feed.positionOf(args.after) ?? "held");
      return feed.read(after, ctx.operationEnded);
    },
    resolve: (p) => p,
  }),
);
