import type { Drawing, Link, LinkEndpoint, Node, Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { endNodesOf, publishTopologyEvent } from "../core/events.js";
import { projectDir } from "./serialize.js";

/** A project's topology rows, as announceTopology reads and publishes them. */
export interface TopologyRows {
  nodes: Node[];
  links: (Link & { endpoints: LinkEndpoint[] })[];
  drawings: Drawing[];
  projectDir: string;
}

/** The project's nodes, links (with their endpoints) and drawings, in creation order. */
export async function topologyRows(ctx: AppContext, project: Project): Promise<TopologyRows> {
  const where = { projectId: project.id };
  const [nodes, links, drawings] = await Promise.all([
    ctx.db.node.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
    ctx.db.link.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }], include: { endpoints: { orderBy: { position: "asc" } } } }),
    ctx.db.drawing.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
  ]);
  return { nodes, links, drawings, projectDir: projectDir(ctx, project) };
}

/**
 * What a GNS3 controller tells the project stream when it (re)loads a topology — on open and on snapshot
 * restore: node.created for every node, link.created for every link, drawing.created for every drawing.
 *
 * `before`: the topology the load replaced (a snapshot restore). What it held and the load did not bring back is
 * announced first as deleted, as it was (links, then nodes, then drawings, as a node delete cascades), so that a
 * client that follows the stream drops it; what came back under the same id is announced as created again and
 * replaces the client's copy.
 */
export async function announceTopology(ctx: AppContext, project: Project, before?: TopologyRows): Promise<void> {
  const { nodes, links, drawings, projectDir: dir } = await topologyRows(ctx, project);
  if (before) {
    const kept = new Set([...nodes, ...links, ...drawings].map((o) => o.id));
    for (const link of before.links.filter((l) => !kept.has(l.id))) {
      await publishTopologyEvent(ctx, project.id, { type: "link.deleted", link, nodes: endNodesOf(link, before.nodes) });
    }
    for (const node of before.nodes.filter((n) => !kept.has(n.id))) {
      await publishTopologyEvent(ctx, project.id, { type: "node.deleted", node, projectDir: before.projectDir });
    }
    for (const drawing of before.drawings.filter((d) => !kept.has(d.id))) {
      await publishTopologyEvent(ctx, project.id, { type: "drawing.deleted", drawing });
    }
  }
  for (const node of nodes) await publishTopologyEvent(ctx, project.id, { type: "node.created", node, projectDir: dir });
  for (const link of links) await publishTopologyEvent(ctx, project.id, { type: "link.created", link, nodes: endNodesOf(link, nodes) });
  for (const drawing of drawings) await publishTopologyEvent(ctx, project.id, { type: "drawing.created", drawing });
}
