import { z } from "zod";
import type { Request, Response } from "express";
import type { AppContext } from "../../platform/context.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import type { DataLinkType, PcapWriter } from "../runtime/pcap.js";
import { linkCapture, startLinkCapture, stopLinkCapture } from "./capture.js";
import { linkToRest } from "./serialize.js";

const L = "/v2/projects/{project_id}/links/{link_id}";

const DLT_NAMES = ["DLT_ATM_RFC1483", "DLT_EN10MB", "DLT_FRELAY", "DLT_C_HDLC", "DLT_PPP_SERIAL"] as const satisfies readonly DataLinkType[];

const captureSchema = z.strictObject({
  capture_file_name: z.string().optional(),
  data_link_type: z.enum(DLT_NAMES).optional(),
});

/** Link capture: start_capture, stop_capture and the live pcap stream. */
export function captureRoutes(routes: Gns3Routes, ctx: AppContext): void {
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
