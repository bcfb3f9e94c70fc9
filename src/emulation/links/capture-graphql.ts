import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import type { DataLinkType } from "../runtime/pcap.js";
import { startLinkCapture, stopLinkCapture } from "./capture.js";
import type { LinkWithEndpoints } from "./serialize.js";
import "./packets-graphql.js";

/** GraphQL face of link capture: start, stop, and the live decoded packets (packets-graphql.ts). */
const CaptureDataLinkType = builder.enumType("CaptureDataLinkType", {
  description: "Link-layer header type written into the pcap file",
  values: {
    EN10MB: { value: "DLT_EN10MB", description: "Ethernet (default)" },
    ATM_RFC1483: { value: "DLT_ATM_RFC1483", description: "ATM (RFC 1483 encapsulation), for ATM switch links" },
    FRELAY: { value: "DLT_FRELAY", description: "Frame Relay, for Frame Relay switch links" },
    C_HDLC: { value: "DLT_C_HDLC", description: "Cisco HDLC, for serial links" },
    PPP_SERIAL: { value: "DLT_PPP_SERIAL", description: "PPP over a serial link" },
  } as const,
});

const LinkCaptureState = builder.objectRef<LinkWithEndpoints>("LinkCaptureState").implement({
  description: "The packet capture of a link",
  fields: (t) => ({
    linkId: t.exposeString("id", { description: "The captured link's id" }),
    projectId: t.exposeString("projectId", { description: "The id of the link's project" }),
    capturing: t.exposeBoolean("capturing", { description: "Whether the capture is running" }),
    fileName: t.exposeString("captureFileName", { nullable: true, description: "Kept after the capture stops" }),
    filePath: t.exposeString("captureFilePath", { nullable: true, description: "The capture file's path on the compute" }),
    computeId: t.exposeString("captureComputeId", { nullable: true, description: "Set while capturing" }),
  }),
});

builder.mutationFields((t) => ({
  startCapture: t.field({
    type: LinkCaptureState,
    description: "Starts capturing the link's traffic into <project>/project-files/captures/<fileName>",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.id({ required: true, description: "The id of the link's project (an opened project)" }),
      linkId: t.arg.id({ required: true, description: "The link to capture" }),
      fileName: t.arg.string({ required: false, description: "Default: <node1>_<a>-<p>_to_<node2>_<a>-<p>.pcap" }),
      dataLinkType: t.arg({ type: CaptureDataLinkType, required: false, description: "The link-layer type of the frames (Ethernet by default)" }),
    },
    resolve: (_r, a, ctx) =>
      startLinkCapture(ctx, a.projectId, a.linkId, {
        captureFileName: a.fileName ?? undefined,
        dataLinkType: (a.dataLinkType ?? undefined) as DataLinkType | undefined,
      }),
  }),
  stopCapture: t.field({
    type: LinkCaptureState,
    description: "Stops capturing the link's traffic; the capture file stays in the project",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true, description: "The id of the link's project" }), linkId: t.arg.id({ required: true, description: "The captured link" }) },
    resolve: (_r, a, ctx) => stopLinkCapture(ctx, a.projectId, a.linkId),
  }),
}));
