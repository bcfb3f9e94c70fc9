import { builder } from "../../platform/graphql/builder.js";
import { RUNNER_ERRORS } from "../core/runner-errors.js";
import { OPENED_PROJECT_ERRORS } from "../projects/lookup.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import type { DataLinkType } from "../runtime/pcap.js";
import { CAPTURE_READ_ERRORS, startLinkCapture, stopLinkCapture } from "./capture.js";
import type { LinkWithEndpoints } from "./serialize.js";
import { CaptureDataLinkType } from "../nodes/graphql.js";
import { linkAddress, LinkRef } from "./graphql.js";
import "./packets-graphql.js";

/** GraphQL face of link capture: start, stop, and the live decoded packets (packets-graphql.ts). */

const StartCaptureInput = builder.inputType("StartCaptureInput", {
  description: "The link to capture and how",
  fields: (t) => ({
    id: t.id({ required: true, description: "The link (its global id, or its GNS3 link_id; of an opened project)" }),
    fileName: t.string({ description: "The capture file's name; default <node1>_<a>-<p>_to_<node2>_<a>-<p>.pcap" }),
    dataLinkType: t.field({ type: CaptureDataLinkType, description: "The link-layer type of the frames (Ethernet by default)" }),
  }),
});
const StopCaptureInput = builder.inputType("StopCaptureInput", {
  description: "The link whose capture stops",
  fields: (t) => ({ id: t.id({ required: true, description: "The link (its global id, or its GNS3 link_id)" }) }),
});
/** A capture's payload: the link, whose `capturing` and `captureFileName` … show where the capture stands. */
const capturePayload = (name: string) =>
  payloadType<{ link: LinkWithEndpoints }>(name, `What \`${name}\` changed: the link`, (t) => ({
    link: t.field({ type: LinkRef, description: "The link as it is now: `capturing`, `captureFileName`, `pcapUrl` …", resolve: (p) => p.link }),
  }));

builder.mutationFields((t) => ({
  startCapture: t.field({
    type: capturePayload("startCapture"),
    description: "Starts capturing the link's traffic into <project>/project-files/captures/<fileName>",
    errors: mutationErrors("startCapture", [...CAPTURE_READ_ERRORS, ...RUNNER_ERRORS]),
    args: { input: t.arg({ type: StartCaptureInput, required: true, description: "The link and the capture's settings" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await linkAddress(ctx, input.id);
      const settings = { captureFileName: input.fileName ?? undefined, dataLinkType: (input.dataLinkType ?? undefined) as DataLinkType | undefined };
      return { link: await startLinkCapture(ctx, at.projectId, at.id, settings) };
    },
  }),
  stopCapture: t.field({
    type: capturePayload("stopCapture"),
    description: "Stops capturing the link's traffic; the capture file stays in the project",
    errors: mutationErrors("stopCapture", [...OPENED_PROJECT_ERRORS, ...RUNNER_ERRORS]),
    args: { input: t.arg({ type: StopCaptureInput, required: true, description: "The link" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await linkAddress(ctx, input.id);
      return { link: await stopLinkCapture(ctx, at.projectId, at.id) };
    },
  }),
}));
