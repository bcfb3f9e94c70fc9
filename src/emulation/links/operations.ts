import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError, NotFoundError } from "../../platform/core/errors.js";
import { parseInput } from "../../platform/input.js";
import { linkEndNodes, publishTopologyEvent } from "../core/events.js";
import { nodePorts } from "../node-model/ports.js";
import { nodeProperties } from "../node-model/serialize.js";
import { getNode } from "../nodes/operations.js";
import { getOpenedProject, getProject } from "../projects/lookup.js";
import { checkLinkEnd } from "../runtime/drivers/registry.js";
import { AVAILABLE_FILTERS, FILTERING_NODE_TYPES, normalizeFilters } from "./filters.js";
import { linkChangesSchema, newLinkSchema, type LinkChanges, type LinkEndpointInput, type NewLink } from "./schema.js";
import { linkToRest, type LinkWithEndpoints } from "./serialize.js";

const DEFAULT_LABEL_STYLE = "font-family: TypeWriter;font-size: 10.0;font-weight: bold;fill: #000000;fill-opacity: 1.0;";
const CLOUDS = new Set(["cloud", "nat"]);
const withEndpoints = { endpoints: { orderBy: { position: "asc" } } } as const;
const byCreation = [{ createdAt: "asc" }, { id: "asc" }] as const;

/** Checks one end against the ends already attached, in GNS3's order; returns the port's link type. */
async function checkEndpoint(
  tx: Tx,
  projectId: string,
  end: LinkEndpointInput,
  attached: { nodeId: string; nodeType: string; linkType: string }[],
) {
  const node = await tx.node.findFirst({ where: { id: end.nodeId, projectId } });
  if (!node) throw new NotFoundError(`Node ID ${end.nodeId} doesn't exist`);
  const port = nodePorts({ ...node, properties: nodeProperties(node) }).find(
    (p) => p.adapter_number === end.adapterNumber && p.port_number === end.portNumber,
  );
  if (!port) throw new NotFoundError(`Port ${end.adapterNumber}/${end.portNumber} for ${node.name} not found`);
  const used = await tx.linkEndpoint.findUnique({
    where: { nodeId_adapterNumber_portNumber: { nodeId: end.nodeId, adapterNumber: end.adapterNumber, portNumber: end.portNumber } },
  });
  if (used) throw new ConflictError("Port is already used");
  for (const other of attached) {
    if (other.nodeId === node.id) throw new ConflictError("Cannot connect to itself");
    if (CLOUDS.has(node.nodeType) && CLOUDS.has(other.nodeType)) {
      throw new ConflictError(`Connecting a ${other.nodeType} to a ${node.nodeType} is not allowed`);
    }
    if (other.linkType !== port.link_type) {
      throw new ConflictError(`Connecting a ${other.linkType} interface to a ${port.link_type} interface is not allowed`);
    }
  }
  return { nodeId: node.id, nodeType: node.nodeType, linkType: port.link_type, node, end };
}

/**
 * Creates a link with zero, one or two ends. It is announced (link.created) only once both ends are attached,
 * like GNS3; a rejected link was never announced, so (unlike GNS3) no link.deleted follows a failure.
 */
export async function createLink(ctx: AppContext, projectId: string, raw: NewLink): Promise<LinkWithEndpoints> {
  const input = parseInput(newLinkSchema, raw);
  await getOpenedProject(ctx, projectId);
  const filters = normalizeFilters(input.filters ?? {});
  const id = input.linkId ?? randomUUID();
  try {
    const link = await ctx.db.$transaction(async (tx) => {
      if (await tx.link.findUnique({ where: { id } })) throw new ConflictError(`Link ID ${id} already exists`, { target: "id", reason: "already_exists" });
      const attached: Awaited<ReturnType<typeof checkEndpoint>>[] = [];
      for (const end of input.nodes ?? []) attached.push(await checkEndpoint(tx, projectId, end, attached));
      // Then the compute that runs each end may refuse to carry it (a cloud binding a host interface outside local mode).
      for (const a of attached) {
        if (a.node.computeId === "local") checkLinkEnd(a.node, a.end.adapterNumber, a.end.portNumber, ctx.services.emulation.runtime.host);
      }
      return tx.link.create({
        data: {
          id,
          projectId,
          linkType: attached[0]?.linkType ?? "ethernet",
          filtersJson: JSON.stringify(filters),
          linkStyleJson: JSON.stringify(input.linkStyle ?? {}),
          suspend: input.suspend ?? false,
          endpoints: {
            create: (input.nodes ?? []).map((e, position) => ({
              position,
              nodeId: e.nodeId,
              adapterNumber: e.adapterNumber,
              portNumber: e.portNumber,
              labelJson: JSON.stringify(e.label ?? { text: `${e.adapterNumber}/${e.portNumber}`, style: DEFAULT_LABEL_STYLE }),
            })),
          },
        },
        include: withEndpoints,
      });
    });
    if (link.endpoints.length === 2) {
      // Wired by the project's runner before the 201 and the event; a link whose end cannot be carried yet still exists.
      await ctx.services.emulation.runners.apply(projectId, { do: "wireLinks", linkIds: [link.id] });
      await publishTopologyEvent(ctx, projectId, { type: "link.created", link, nodes: await linkEndNodes(ctx.db, [link]) });
    }
    return link;
  } catch (e) {
    // A concurrent link took the port between our check and our insert.
    if ((e as { code?: string }).code === "P2002") throw new ConflictError("Port is already used");
    throw e;
  }
}

export async function getLink(ctx: AppContext, projectId: string, linkId: string): Promise<LinkWithEndpoints> {
  await getOpenedProject(ctx, projectId);
  const link = await ctx.db.link.findFirst({ where: { id: linkId, projectId }, include: withEndpoints });
  if (!link) throw new NotFoundError(`Link ID ${linkId} doesn't exist`);
  return link;
}

/** All links of a project, opened or closed (the adapter picks the shape), in creation order. */
export async function listLinks(ctx: AppContext, projectId: string) {
  const project = await getProject(ctx, projectId);
  const links = await ctx.db.link.findMany({ where: { projectId }, include: withEndpoints, orderBy: [...byCreation] });
  return { project, links };
}

export async function listNodeLinks(ctx: AppContext, projectId: string, nodeId: string): Promise<LinkWithEndpoints[]> {
  await getNode(ctx, projectId, nodeId);
  return ctx.db.link.findMany({ where: { projectId, endpoints: { some: { nodeId } } }, include: withEndpoints, orderBy: [...byCreation] });
}

/**
 * Applies filters, style, suspend and end labels in that order, in one write; like GNS3 each effective change
 * is announced by its own link.updated carrying the link as it stands after that step.
 */
export async function updateLink(ctx: AppContext, projectId: string, linkId: string, raw: LinkChanges): Promise<LinkWithEndpoints> {
  const changes = parseInput(linkChangesSchema, raw);
  const before = await getLink(ctx, projectId, linkId);
  const steps: LinkWithEndpoints[] = [];
  let state = before;
  const step = (next: LinkWithEndpoints) => {
    if (JSON.stringify(linkToRest(next)) === JSON.stringify(linkToRest(state))) return;
    steps.push(next);
    state = next;
  };
  if (changes.filters) step({ ...state, filtersJson: JSON.stringify(normalizeFilters(changes.filters)) });
  if (changes.linkStyle) step({ ...state, linkStyleJson: JSON.stringify(changes.linkStyle) });
  if (changes.suspend !== undefined) step({ ...state, suspend: changes.suspend });
  if (changes.nodes) {
    const labels = new Map(changes.nodes.filter((n) => n.label).map((n) => [n.nodeId, JSON.stringify(n.label)]));
    step({ ...state, endpoints: state.endpoints.map((e) => ({ ...e, labelJson: labels.get(e.nodeId) ?? e.labelJson })) });
  }
  if (!steps.length) return before;
  const after = await ctx.db.$transaction(async (tx) => {
    for (const e of state.endpoints) {
      await tx.linkEndpoint.update({ where: { linkId_position: { linkId, position: e.position } }, data: { labelJson: e.labelJson } });
    }
    return tx.link.update({
      where: { id: linkId },
      data: { filtersJson: state.filtersJson, linkStyleJson: state.linkStyleJson, suspend: state.suspend },
      include: withEndpoints,
    });
  });
  // Filters and suspend are the relay's: it follows them before they are announced.
  if (after.filtersJson !== before.filtersJson || after.suspend !== before.suspend) {
    await ctx.services.emulation.runners.apply(projectId, { do: "wireLinks", linkIds: [linkId] });
  }
  const nodes = await linkEndNodes(ctx.db, [after]);
  for (const s of steps) await publishTopologyEvent(ctx, projectId, { type: "link.updated", link: s, nodes });
  return after;
}

/** For the runtime's packet capture: records the capture columns and announces the link (even when unchanged). */
export async function setLinkCaptureState(
  ctx: AppContext,
  linkId: string,
  capture: { capturing: boolean; captureFileName?: string | null; captureFilePath?: string | null; captureComputeId: string | null },
): Promise<LinkWithEndpoints> {
  const link = await ctx.db.link.update({ where: { id: linkId }, data: capture, include: withEndpoints });
  await publishTopologyEvent(ctx, link.projectId, { type: "link.updated", link, nodes: await linkEndNodes(ctx.db, [link]) });
  return link;
}

export async function deleteLink(ctx: AppContext, projectId: string, linkId: string): Promise<void> {
  const link = await getLink(ctx, projectId, linkId);
  const nodes = await linkEndNodes(ctx.db, [link]); // as they were: the event carries them
  const { count } = await ctx.db.link.deleteMany({ where: { id: linkId } });
  if (!count) throw new NotFoundError(`Link ID ${linkId} doesn't exist`); // deleted concurrently
  await ctx.services.emulation.runners.apply(projectId, { do: "unwireLinks", linkIds: [linkId] });
  await publishTopologyEvent(ctx, projectId, { type: "link.deleted", link, nodes });
}

/** The filters the link supports: all of them when one end is a node type that can filter, else none. */
export async function availableFilters(ctx: AppContext, projectId: string, linkId: string) {
  const link = await getLink(ctx, projectId, linkId);
  const nodes = await ctx.db.node.findMany({ where: { id: { in: link.endpoints.map((e) => e.nodeId) } }, select: { nodeType: true } });
  return nodes.some((n) => FILTERING_NODE_TYPES.has(n.nodeType)) ? AVAILABLE_FILTERS : [];
}
