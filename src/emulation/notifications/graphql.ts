import type { Drawing, Link, Node, Project } from "../../generated/prisma-sqlite/client.js";
import { GraphQLError } from "graphql";
import type { AppContext } from "../../platform/context.js";
import { InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { isEventId, type ReplayGap, type Topic } from "../../platform/events.js";
import { builder } from "../../platform/graphql/builder.js";
import { domainId } from "../../platform/graphql/global-id.js";
import { ComputeRef } from "../computes/graphql.js";
import type { ComputeEvent } from "../computes/model.js";
import { DRAWING_NAMES, DrawingRef } from "../drawings/graphql.js";
import {
  controllerTopic,
  projectTopic,
  type DrawingEvent,
  type EmulationEvent,
  type LinkEvent,
  type NodeEvent,
  type ProjectEvent,
  type SettingsEvent,
  type SnapshotEvent,
} from "../core/events.js";
import "../links/graphql.js"; // Link, LinkEndpoint and EmulatedNode.links
import { getProject } from "../projects/lookup.js";
import { SnapshotRef } from "../snapshots/graphql.js";
import type { TemplateEvent } from "../templates/builtin.js";
import { Template } from "../templates/graphql.js";
import { toGns3Notification } from "./wire.js";
import { eventObject } from "./event-objects.js";
import { EVENT_PROJECT_DIR, NODE_NAMES } from "../nodes/graphql.js";
import { EVENT_CURSOR, PROJECT_NAMES } from "../projects/graphql.js";

/**
 * The emulation's domain events as typed GraphQL events. Every event has its bus cursor, its GNS3 action name and,
 * for GNS3-shaped consumers, `payload`: the object as the GNS3 notification streams send it (made by the same
 * wire edge). The typed member carries the changed object itself and, for updates, the names of the changed fields.
 */
/** What a subscriber that asked to resume from a cursor the bus cannot replay from receives first (platform/events.ts). */
type ResyncNeeded = { type: "stream.resync"; gap: ReplayGap };

interface Delivered<E extends EmulationEvent | ResyncNeeded = EmulationEvent | ResyncNeeded> {
  cursor: string;
  event: E;
}

const TYPE_OF: Record<string, string> = {
  node: "NodeEvent",
  link: "LinkEvent",
  drawing: "DrawingEvent",
  snapshot: "SnapshotEvent",
  project: "ProjectEvent",
  compute: "ComputeEvent",
  template: "TemplateEvent",
  settings: "SettingsEvent",
  stream: "ResyncEvent",
};

const ChangeKind = builder.enumType("ChangeKind", {
  description: "What happened to the object of an event",
  values: {
    CREATED: { description: "The object was made" },
    UPDATED: { description: "The object changed (`changed` names the fields, where the event has it)" },
    DELETED: { description: "The object is gone; the event carries it as it was" },
    OPENED: { description: "The project was opened: its nodes can run" },
    CLOSED: { description: "The project was closed: its nodes stopped" },
    RESTORED: { description: "The project was restored from the snapshot" },
  } as const,
});
const changeKind = (e: Delivered) => e.event.type.split(".")[1].toUpperCase() as "CREATED";

export const EmulationEventRef = builder.interfaceRef<Delivered>("EmulationEvent").implement({
  description: "An emulation event (node.created, link.updated, project.closed, ...) with its position on the event bus",
  fields: (t) => ({
    cursor: t.string({ description: "Pass as `after` when resubscribing to receive what was missed (bounded replay window)", resolve: (e) => e.cursor }),
    action: t.string({ description: "The GNS3 action name, e.g. node.updated", resolve: (e) => e.event.type }),
    payload: t.field({
      type: "JSON",
      description: "The object as the GNS3 notification streams send it",
      resolve: (e, _a, ctx) => (e.event.type === "stream.resync" ? e.event.gap : toGns3Notification(ctx, e.event).event),
    }),
  }),
  resolveType: (e) => TYPE_OF[e.event.type.split(".")[0]],
});

/** What every typed event object shares: the interface, how it is recognised, a description. */
const member = (name: string, description: string) => ({
  description,
  interfaces: [EmulationEventRef],
  isTypeOf: (e: unknown) => TYPE_OF[(e as Delivered).event.type.split(".")[0]] === name,
});
const changed = { description: "For updates: the fields that changed", nullable: true } as const;
/**
 * An event names the domain's changed fields; the GraphQL fields that carry a unit in their name (`zoomPercent`,
 * `widthPixels`…) are named here as the type shows them.
 */
const changedAs =
  (domainNames: Record<string, string>) =>
  (e: Delivered<NodeEvent | DrawingEvent | ProjectEvent>) =>
    e.event.changed?.map((field) => Object.keys(domainNames).find((name) => domainNames[name] === field) ?? field) ?? null;

// Event payloads are rows without their timestamp (events travel as JSON): what the object types read is there.
const row = <T>(x: object) => x as T;

builder.objectRef<Delivered<NodeEvent>>("NodeEvent").implement({
  ...member("NodeEvent", "A node created, updated (status, position, settings...) or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, description: "What happened to the node", resolve: changeKind }),
    node: t.prismaField({
      type: "Node",
      description:
        "The node as it is after the change, as it was for node.deleted (from the event, also when replayed later); its links are read when delivered (none once it is deleted)",
      resolve: (query, e, _a, ctx) => eventObject<Node>(ctx, "Node", query, { ...e.event.node, [EVENT_PROJECT_DIR]: e.event.projectDir, project: { id: e.event.node.projectId } }),
    }),
    changed: t.stringList({ ...changed, resolve: changedAs(NODE_NAMES) }),
  }),
});
builder.objectRef<Delivered<LinkEvent>>("LinkEvent").implement({
  ...member("LinkEvent", "A link created, updated (filters, suspension, capture) or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, description: "What happened to the link", resolve: changeKind }),
    link: t.prismaField({
      type: "Link",
      description: "The link after the change, as it was for link.deleted: its endpoints and their nodes come from the event",
      resolve: (query, e, _a, ctx) => {
        const nodes = new Map((e.event.nodes ?? []).map((n) => [n.id, n]));
        const link = { ...e.event.link, endpoints: e.event.link.endpoints.map((p) => ({ ...p, node: nodes.get(p.nodeId) })) };
        return eventObject<Link>(ctx, "Link", query, link);
      },
    }),
  }),
});
builder.objectRef<Delivered<DrawingEvent>>("DrawingEvent").implement({
  ...member("DrawingEvent", "A drawing created, updated or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, description: "What happened to the drawing", resolve: changeKind }),
    drawing: t.field({ type: DrawingRef, description: "The drawing after the change, or as it was for drawing.deleted", resolve: (e) => row<Drawing>(e.event.drawing) }),
    changed: t.stringList({ ...changed, resolve: changedAs(DRAWING_NAMES) }),
  }),
});
builder.objectRef<Delivered<SnapshotEvent>>("SnapshotEvent").implement({
  ...member("SnapshotEvent", "A snapshot restored into its project"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, description: "What happened (RESTORED)", resolve: changeKind }),
    snapshot: t.field({ type: SnapshotRef, description: "The snapshot the project was restored from", resolve: (e) => e.event.snapshot }),
  }),
});
builder.objectRef<Delivered<ProjectEvent>>("ProjectEvent").implement({
  ...member("ProjectEvent", "A project created, updated, opened, closed or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, description: "What happened to the project", resolve: changeKind }),
    project: t.prismaField({
      type: "Project",
      description: "The project after the change, as it was for project.deleted; its nodes, links and drawings are read when delivered",
      resolve: (query, e, _a, ctx) => eventObject<Project>(ctx, "Project", query, { ...e.event.project, [EVENT_CURSOR]: e.cursor }),
    }),
    changed: t.stringList({ ...changed, resolve: changedAs(PROJECT_NAMES) }),
  }),
});
const ComputeEventRef = builder.objectRef<Delivered<ComputeEvent>>("ComputeEvent").implement({
  ...member("ComputeEvent", "A change in the computes registry, including connection and usage changes seen by the monitor"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, description: "What happened to the compute", resolve: changeKind }),
    compute: t.field({ type: ComputeRef, description: "The compute after the change, or as it was when deleted", resolve: (e) => e.event.compute }),
  }),
});
const TemplateEventRef = builder.objectRef<Delivered<TemplateEvent>>("TemplateEvent").implement({
  ...member("TemplateEvent", "A template created, updated or deleted (as it is after the change, or as it was)"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, description: "What happened to the template", resolve: changeKind }),
    template: t.field({ type: Template, description: "The template after the change, or as it was when deleted", resolve: (e) => e.event.template }),
  }),
});
builder.objectRef<Delivered<SettingsEvent>>("SettingsEvent").implement({
  ...member("SettingsEvent", "The GUI settings document saved"),
  fields: (t) => ({ settings: t.field({ type: "JSON", description: "The settings document as saved", resolve: (e) => e.event.settings }) }),
});

const ResyncReason = builder.enumType("ResyncReason", {
  description: "Why a stream could not resume from the cursor it was given",
  values: {
    EXPIRED: { value: "EXPIRED", description: "The cursor is older than the events the server keeps: events after it were dropped" },
    UNKNOWN: { value: "UNKNOWN", description: "The cursor is not one this server gave (newer than its last event, e.g. from before a restart)" },
  } as const,
});
builder.objectRef<Delivered<ResyncNeeded>>("ResyncEvent").implement({
  ...member(
    "ResyncEvent",
    "The stream could not resume from `after`: events were missed. Read the state afresh (e.g. project { ... eventCursor }) and apply the events that follow this one, which start right after its cursor",
  ),
  fields: (t) => ({
    reason: t.field({ type: ResyncReason, description: "Why the stream could not resume", resolve: (e) => e.event.gap.reason }),
  }),
});

const isNodeEvent = (e: EmulationEvent): e is NodeEvent => e.type.startsWith("node.");
const isLinkEvent = (e: EmulationEvent): e is LinkEvent => e.type.startsWith("link.");

/** The events about a node (its own and its links') and/or a link; every event when neither is given. */
function concerning(node: string | undefined, link: string | undefined) {
  return (e: EmulationEvent): e is EmulationEvent =>
    (node === undefined || (isNodeEvent(e) && e.node.id === node) || (isLinkEvent(e) && e.link.endpoints.some((p) => p.nodeId === node))) &&
    (link === undefined || (isLinkEvent(e) && e.link.id === link));
}

export function cursor(after: string | null | undefined): string | undefined {
  if (after != null && !isEventId(after)) throw new InvalidInputError(`${after} is not an event cursor`);
  return after ?? undefined;
}

/**
 * The events of a topic, replayed from `after` when given (bounded by the bus replay window), optionally narrowed.
 * When the replay cannot be complete (a cursor older than the window, or unknown), the stream says so first with a
 * ResyncEvent, then follows live events; a stream whose type cannot hold that event (`gap: "error"`) fails instead
 * of silently skipping what was lost.
 */
async function* tail<E extends EmulationEvent>(
  ctx: AppContext,
  topic: Topic<EmulationEvent>,
  after: string | undefined,
  keep: (e: EmulationEvent) => e is E = (e): e is E => true,
  gap: "event" | "error" = "event",
): AsyncGenerator<Delivered<E | ResyncNeeded>> {
  const sub = ctx.bus.subscribe(topic, { after });
  try {
    const missed = await sub.replayed;
    if (missed && gap === "error") {
      throw new GraphQLError(`Cannot resume after ${after}: events after it are no longer kept (${missed.reason}); read the state again and subscribe without \`after\`.`, {
        extensions: { code: "RESYNC_REQUIRED", reason: missed.reason, cursor: missed.cursor },
      });
    }
    if (missed) yield { cursor: missed.cursor, event: { type: "stream.resync", gap: missed } };
    for await (const { id, data } of sub) if (keep(data)) yield { cursor: id, event: data };
  } finally {
    await sub.return();
  }
}

const isCompute = (e: EmulationEvent): e is ComputeEvent => e.type.startsWith("compute.");
const isTemplate = (e: EmulationEvent): e is TemplateEvent => e.type.startsWith("template.");

// With `errors`, a domain error thrown while subscribing arrives as one typed result, then the subscription ends;
// only a refused argument (a cursor, an id of another type) and, for projectEvents, an unknown project can be one.
builder.subscriptionFields((t) => ({
  projectEvents: t.field({
    type: EmulationEventRef,
    // EmulationEvent is an interface, which a union cannot hold: the event comes wrapped (`data`).
    errors: { types: [InvalidInputError, NotFoundError], directResult: false },
    description: "The node, link, drawing and snapshot events of one project (NodeEvent, LinkEvent, DrawingEvent, SnapshotEvent)",
    args: {
      projectId: t.arg.id({ required: true, description: "The project (its global id, or its GNS3 project_id)" }),
      nodeId: t.arg.id({ description: "Only this node's events, and those of the links attached to it (its global id, or its GNS3 node_id)" }),
      linkId: t.arg.id({ description: "Only this link's events (its global id, or its GNS3 link_id)" }),
      after: t.arg.string({ description: "Resume after this cursor" }),
    },
    subscribe: async (_r, args, ctx) => {
      const from = cursor(args.after);
      const projectId = domainId(args.projectId, "Project", "projectId");
      const nodeId = args.nodeId == null ? undefined : domainId(args.nodeId, "EmulatedNode", "nodeId");
      const linkId = args.linkId == null ? undefined : domainId(args.linkId, "Link", "linkId");
      await getProject(ctx, projectId);
      return tail(ctx, projectTopic(projectId), from, concerning(nodeId, linkId));
    },
    resolve: (e) => e,
  }),
  controllerEvents: t.field({
    type: EmulationEventRef,
    errors: { types: [InvalidInputError], directResult: false },
    description: "Server-wide events: ProjectEvent, ComputeEvent, TemplateEvent, SettingsEvent",
    args: { after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: (_r, args, ctx) => tail(ctx, controllerTopic, cursor(args.after)),
    resolve: (e) => e,
  }),
  computeEvents: t.field({
    type: ComputeEventRef,
    description: "Computes created, updated (connection, usage) and deleted",
    args: { after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: (_r, args, ctx) => tail(ctx, controllerTopic, cursor(args.after), isCompute, "error") as AsyncGenerator<Delivered<ComputeEvent>>,
    resolve: (e) => e,
  }),
  templateEvents: t.field({
    type: TemplateEventRef,
    errors: { types: [InvalidInputError] },
    description: "Templates created, updated and deleted (the GNS3 GUI's device list follows the same events)",
    args: { after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: (_r, args, ctx) => tail(ctx, controllerTopic, cursor(args.after), isTemplate, "error") as AsyncGenerator<Delivered<TemplateEvent>>,
    resolve: (e) => e,
  }),
}));
