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
    ATM_RFC1483: { value: "DLT_ATM_RFC1483" },
    FRELAY: { value: "DLT_FRELAY" },
    C_HDLC: { value: "DLT_C_HDLC" },
    PPP_SERIAL: { value: "DLT_PPP_SERIAL" },
  } as const,
});

const LinkCaptureState = builder.objectRef<LinkWithEndpoints>("LinkCaptureState").implement({
  description: "The packet capture of a link",
  fields: (t) => ({
    linkId: t.exposeString("id"),
    projectId: t.exposeString("projectId"),
    capturing: t.exposeBoolean("capturing"),
    fileName: t.exposeString("captureFileName", { nullable: true, description: "Kept after the capture stops" }),
    filePath: t.exposeString("captureFilePath", { nullable: true }),
    computeId: t.exposeString("captureComputeId", { nullable: true, description: "Set while capturing" }),
  }),
});

builder.mutationFields((t) => ({
  startCapture: t.field({
    type: LinkCaptureState,
    description: "Starts capturing the link's traffic into <project>/project-files/captures/<fileName>",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.id({ required: true }),
      linkId: t.arg.id({ required: true }),
      fileName: t.arg.string({ required: false, description: "Default: <node1>_<a>-<p>_to_<node2>_<a>-<p>.pcap" }),
      dataLinkType: t.arg({ type: CaptureDataLinkType, required: false }),
    },
    resolve: (_r, a, ctx) =>
      startLinkCapture(ctx, a.projectId, a.linkId, {
        captureFileName: a.fileName ?? undefined,
        dataLinkType: (a.dataLinkType ?? undefined) as DataLinkType | undefined,
      }),
  }),
  stopCapture: t.field({
    type: LinkCaptureState,
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), linkId: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => stopLinkCapture(ctx, a.projectId, a.linkId),
  }),
}));
