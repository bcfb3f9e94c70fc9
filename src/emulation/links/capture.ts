import fs from "node:fs/promises";
import path from "node:path";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { resolveInside } from "../files/safe-path.js";
import { isRemote } from "../computes/model.js";
import { projectDirectory } from "../nodes/operations.js";
import { getProject } from "../projects/lookup.js";
import { isAlwaysOn } from "../runtime/drivers/registry.js";
import type { DataLinkType, PcapWriter } from "../runtime/pcap.js";
import { getLink, setLinkCaptureState } from "./operations.js";
import type { LinkWithEndpoints } from "./serialize.js";

/** Packet capture of a link (GNS3's start_capture, stop_capture, pcap), shared by REST and GraphQL. */

async function hasRunningDevice(ctx: AppContext, link: LinkWithEndpoints): Promise<boolean> {
  const nodes = await ctx.db.node.findMany({ where: { id: { in: link.endpoints.map((e) => e.nodeId) } } });
  // A remote node's status is its compute's (placement keeps it current); the relay is here either way.
  return nodes.some(
    (n) => n.status === "started" && (isAlwaysOn(n.nodeType) || isRemote(n) || ctx.services.emulation.runtime.isRunning(n.id)),
  );
}

/** `<node1>_<a1>-<p1>_to_<node2>_<a2>-<p2>.pcap` with characters outside [0-9A-Za-z_-] removed (GNS3's default). */
export async function defaultCaptureFileName(ctx: AppContext, link: LinkWithEndpoints): Promise<string> {
  const nodes = await ctx.db.node.findMany({ where: { id: { in: link.endpoints.map((e) => e.nodeId) } } });
  const names = new Map(nodes.map((n) => [n.id, n.name]));
  const ends = [...link.endpoints].sort((a, b) => a.position - b.position);
  const raw = ends.map((e) => `${names.get(e.nodeId) ?? ""}_${e.adapterNumber}-${e.portNumber}`).join("_to_");
  return `${raw.replace(/[^0-9A-Za-z_-]/g, "")}.pcap`;
}

export interface CaptureInput {
  captureFileName?: string;
  dataLinkType?: DataLinkType;
}

/** Runs on the instance that runs the project (instances/runners.ts), where the link's relay is. */
export async function startLinkCapture(ctx: AppContext, projectId: string, linkId: string, input: CaptureInput = {}): Promise<LinkWithEndpoints> {
  await getLink(ctx, projectId, linkId);
  const here = () => startCaptureHere(ctx, projectId, linkId, input);
  return (await ctx.services.emulation.runners.onRunner(projectId, { kind: "startCapture", projectId, linkId, input }, here)) ?? getLink(ctx, projectId, linkId);
}

async function startCaptureHere(ctx: AppContext, projectId: string, linkId: string, input: CaptureInput): Promise<LinkWithEndpoints> {
  const link = await getLink(ctx, projectId, linkId);
  if (link.endpoints.length < 2 || !(await hasRunningDevice(ctx, link))) {
    throw new ConflictError("Cannot capture because there is no running device on this link");
  }
  const compute = ctx.services.emulation.runtime;
  if (compute.capture(linkId)) throw new ConflictError("Packet capture is already activated on this link");
  const name = input.captureFileName || (await defaultCaptureFileName(ctx, link));
  const dir = path.join(projectDirectory(ctx, await getProject(ctx, projectId)), "project-files", "captures");
  await fs.mkdir(dir, { recursive: true });
  const file = await resolveInside(dir, name);
  await compute.startCapture(linkId, file, input.dataLinkType ?? "DLT_EN10MB");
  return setLinkCaptureState(ctx, linkId, { capturing: true, captureFileName: path.basename(file), captureFilePath: file, captureComputeId: "local" });
}

/** Always succeeds (and announces the link), capturing or not, like GNS3. */
export async function stopLinkCapture(ctx: AppContext, projectId: string, linkId: string): Promise<LinkWithEndpoints> {
  await getLink(ctx, projectId, linkId);
  const here = async () => {
    await ctx.services.emulation.runtime.stopCapture(linkId);
    return setLinkCaptureState(ctx, linkId, { capturing: false, captureComputeId: null });
  };
  return (await ctx.services.emulation.runners.onRunner(projectId, { kind: "stopCapture", projectId, linkId }, here)) ?? getLink(ctx, projectId, linkId);
}

/**
 * What a read of a link's running capture (its packets, its pcap URL) can fail with: a refused argument (an id of
 * another type, a cursor, a validity), no such link, a closed project, no capture running here.
 */
export const CAPTURE_READ_ERRORS = [InvalidInputError, NotFoundError, ForbiddenError, ConflictError];

/** The live capture of a link (GET L/pcap, linkPackets); 409 when there is none here. */
export async function linkCapture(ctx: AppContext, projectId: string, linkId: string): Promise<PcapWriter> {
  const link = await getLink(ctx, projectId, linkId);
  const writer = ctx.services.emulation.runtime.capture(linkId);
  // The capture runs where the project does: with several instances, that may be another one.
  if (!writer && link.capturing && ctx.config.redisUrl) {
    const runner = await ctx.services.emulation.runners.runnerOf(projectId);
    if (runner !== ctx.config.instanceId) throw new ConflictError(`The packet capture of this link runs on instance ${runner}: read it there`);
  }
  if (!writer) throw new ConflictError("This link has no active packet capture");
  return writer;
}

/** GNS3 stops a capture when the node it runs on stops; here: when no end of the link is running any more. */
export async function stopOrphanCaptures(ctx: AppContext, nodeId: string): Promise<void> {
  const links = await ctx.db.link.findMany({ where: { capturing: true, endpoints: { some: { nodeId } } }, include: { endpoints: true } });
  for (const link of links) {
    if (await hasRunningDevice(ctx, link)) continue;
    await ctx.services.emulation.runtime.stopCapture(link.id);
    await setLinkCaptureState(ctx, link.id, { capturing: false, captureComputeId: null });
  }
}
