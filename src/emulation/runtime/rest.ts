import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { linkToRest } from "../links/serialize.js";
import { restNode } from "../nodes/operations.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import {
  bulkNodeAction,
  idlePc,
  linkCapture,
  NODE_ACTIONS,
  nodeAction,
  startLinkCapture,
  stopLinkCapture,
} from "./operations.js";
import type { Request, Response } from "express";
import type { DataLinkType, PcapWriter } from "./pcap.js";
import { qemuHostRoutes } from "./qemu-rest.js";

const P = "/v2/projects/{project_id}";
const N = `${P}/nodes/{node_id}`;
const L = `${P}/links/{link_id}`;

const DLT_NAMES = ["DLT_ATM_RFC1483", "DLT_EN10MB", "DLT_FRELAY", "DLT_C_HDLC", "DLT_PPP_SERIAL"] as const satisfies readonly DataLinkType[];

const captureSchema = z.strictObject({
  capture_file_name: z.string().optional(),
  data_link_type: z.enum(DLT_NAMES).optional(),
});

/**
 * The local compute's REST face: node start/stop/suspend/reload (single and bulk), Dynamips idle-PC routes,
 * link capture and the live pcap stream.
 */
export function runtimeRoutes(routes: Gns3Routes, ctx: AppContext): void {
  qemuHostRoutes(routes);
  for (const action of NODE_ACTIONS) {
    // The reference answers with a stale status (quirk 16.1); we answer with the node as it is after the action.
    routes.add("POST", `${N}/${action}`, async ({ res, params }) => {
      const node = await nodeAction(ctx, params.project_id, params.node_id, action);
      sendJson(res, 200, await restNode(ctx, node));
    });
    routes.add("POST", `${P}/nodes/${action}`, async ({ res, params }) => {
      await bulkNodeAction(ctx, params.project_id, action);
      res.status(204).end();
    });
  }

  for (const what of ["auto_idlepc", "idlepc_proposals"] as const) {
    routes.add("GET", `${N}/dynamips/${what}`, async ({ params }) => idlePc(ctx, params.project_id, params.node_id, what));
  }

  routes.add(
    "POST",
    `${L}/start_capture`,
    async ({ res, params, body }) => {
      const b = body as z.infer<typeof captureSchema>;
      const link = await startLinkCapture(ctx, params.project_id, params.link_id, {
        captureFileName: b.capture_file_name,
        dataLinkType: b.data_link_type,
      });
      sendJson(res, 201, linkToRest(link));
    },
    { schema: captureSchema },
  );
  routes.add("POST", `${L}/stop_capture`, async ({ res, params }) => {
    sendJson(res, 201, linkToRest(await stopLinkCapture(ctx, params.project_id, params.link_id)));
  });

  routes.add("GET", `${L}/pcap`, async ({ req, res, params }) => streamPcap(req, res, await linkCapture(ctx, params.project_id, params.link_id)));
}

/** Streams a capture file from its start, then every new packet, until the capture stops or the client leaves. */
export async function streamPcap(req: Request, res: Response, writer: PcapWriter): Promise<void> {
  res.status(200).set({ "Content-Type": "application/vnd.tcpdump.pcap", "Cache-Control": "no-cache" });
  res.flushHeaders();
  const chunks = writer.follow();
  const stop = () => void chunks.return(undefined);
  req.on("close", stop);
  res.on("close", stop);
  try {
    for await (const chunk of chunks) {
      if (!res.write(chunk)) await new Promise<void>((r) => res.once("drain", () => r()).once("close", () => r()));
    }
  } finally {
    res.end();
  }
}
