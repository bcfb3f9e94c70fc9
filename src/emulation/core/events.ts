import type { Drawing, Link, LinkEndpoint, Node, Project, Snapshot } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { channelTopic, type Topic } from "../../platform/events.js";

/**
 * The emulation's domain events: what changed, as the operations know it (database rows, ids, the names of the
 * changed fields). The GNS3 notification streams turn them into GNS3's wire form at their own edge
 * (notifications/wire.ts); GraphQL subscriptions expose them as typed events; the runtime and the placement
 * follow them to drive processes and remote computes.
 *
 * Row timestamps are left out of the types: events travel as JSON, where a Date does not survive.
 */
type Plain<T> = Omit<T, "createdAt">;

/** A link as events carry it: the row with its endpoints, no timestamp. */
export type LinkData = Plain<Link & { endpoints: LinkEndpoint[] }>;

export type NodeEvent = {
  type: "node.created" | "node.updated" | "node.deleted";
  node: Plain<Node>;
  /** Where the node's project lives on disk (the node directory is inside it). */
  projectDir: string;
  /** node.updated: the fields that changed. */
  changed?: string[];
};
/**
 * A link event carries the nodes at the link's ends as they were when it happened (a link.deleted cascaded from a
 * node delete names a node that no longer exists), so that a subscriber reads the whole link from the event.
 */
export type LinkEvent = { type: "link.created" | "link.updated" | "link.deleted"; link: LinkData; nodes: Plain<Node>[] };
export type DrawingEvent = { type: "drawing.created" | "drawing.updated" | "drawing.deleted"; drawing: Plain<Drawing>; changed?: string[] };
export type SnapshotEvent = { type: "snapshot.restored"; snapshot: Snapshot };
/** The events of one project's channel. */
export type TopologyEvent = NodeEvent | LinkEvent | DrawingEvent | SnapshotEvent;

export type ProjectEvent = {
  type: "project.created" | "project.updated" | "project.opened" | "project.closed" | "project.deleted";
  project: Plain<Project>;
  changed?: string[];
};
export type SettingsEvent = { type: "settings.updated"; settings: Record<string, unknown> };
/**
 * The server-wide events, one entry per kind of object. Kinds whose object is defined above the events declare
 * their entry next to that object by merging into this interface, as features declare their channels in
 * `EventChannels`: `compute` (ComputeEvent, computes/model.ts), `template` (TemplateEvent, templates/builtin.ts).
 */
export interface ControllerEvents {
  project: ProjectEvent;
  settings: SettingsEvent;
}
/** The server-wide events. */
export type ControllerEvent = ControllerEvents[keyof ControllerEvents];

export type EmulationEvent = TopologyEvent | ControllerEvent;

const CONTROLLER_CHANNEL = "emulation:controller";
const PROJECT_PREFIX = "emulation:project:";
type ProjectChannel = `${typeof PROJECT_PREFIX}${string}`;

declare module "../../platform/events.js" {
  interface EventChannels {
    "emulation:controller": ControllerEvent;
    [channel: ProjectChannel]: TopologyEvent;
  }
}

const projectChannel = (projectId: string): ProjectChannel => `${PROJECT_PREFIX}${projectId}`;

/** The id of the project whose channel this is, if it is one. */
export const channelProjectId = (channel: string): string | undefined =>
  channel.startsWith(PROJECT_PREFIX) ? channel.slice(PROJECT_PREFIX.length) : undefined;

export const controllerTopic = channelTopic(CONTROLLER_CHANNEL);
export const projectTopic = (projectId: string) => channelTopic(projectChannel(projectId));
/** Every project's channel (a compute's global stream, the runtime). */
export const allProjectsTopic: Topic<TopologyEvent> = { match: (c) => c.startsWith(PROJECT_PREFIX) };

/** The nodes at the ends of `links`, now (one statement): what their link events carry. */
export async function linkEndNodes(
  db: { node: { findMany(args: { where: { id: { in: string[] } } }): Promise<Node[]> } },
  links: { endpoints: { nodeId: string }[] }[],
): Promise<Node[]> {
  const ids = [...new Set(links.flatMap((l) => l.endpoints.map((e) => e.nodeId)))];
  return ids.length ? db.node.findMany({ where: { id: { in: ids } } }) : [];
}

/** Of `nodes`, those at the ends of `link`. */
export const endNodesOf = (link: { endpoints: { nodeId: string }[] }, nodes: Iterable<Plain<Node>>) => {
  const ids = new Set(link.endpoints.map((e) => e.nodeId));
  return [...nodes].filter((n) => ids.has(n.id));
};

// Publishing drops the project's read views first: a read after this write's answer must not see them.

/** node.*, link.*, drawing.*, snapshot.restored — on the channel of one project. */
export function publishTopologyEvent(ctx: AppContext, projectId: string, event: TopologyEvent) {
  ctx.services.emulation?.reads.invalidate(projectId);
  return ctx.bus.publish(projectChannel(projectId), event);
}

/** project.*, compute.*, template.*, settings.updated — on the controller channel. */
export function publishControllerEvent(ctx: AppContext, event: ControllerEvent) {
  if ("project" in event) ctx.services.emulation?.reads.invalidate(event.project.id);
  return ctx.bus.publish(CONTROLLER_CHANNEL, event);
}

/** The names of the fields whose values differ, for `changed`: as the API names them (`properties`, not the column `propertiesJson`). */
export function changedFields<T extends object>(before: T, after: T): string[] {
  const keys = Object.keys(after) as (keyof T & string)[];
  return keys.filter((k) => k !== "createdAt" && JSON.stringify(before[k]) !== JSON.stringify(after[k])).map((k) => k.replace(/Json$/, ""));
}
