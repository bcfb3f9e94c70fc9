import type { Drawing, Link, Node, Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { InvalidInputError } from "../../platform/core/errors.js";
import { isEventId, type Topic } from "../../platform/events.js";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { ComputeRef } from "../computes/graphql.js";
import type { ComputeEvent } from "../computes/model.js";
import { DrawingRef } from "../drawings/graphql.js";
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
import { LinkRef } from "../links/graphql.js";
import { NodeRef } from "../nodes/graphql.js";
import { ProjectRef } from "../projects/graphql.js";
import { getProject } from "../projects/lookup.js";
import { SnapshotRef } from "../snapshots/graphql.js";
import type { TemplateEvent } from "../templates/builtin.js";
import { Template } from "../templates/graphql.js";
import { toGns3Notification } from "./wire.js";

/**
 * The emulation's domain events as typed GraphQL events. Every event has its bus cursor, its GNS3 action name and,
 * for GNS3-shaped consumers, `payload`: the object as the GNS3 notification streams send it (made by the same
 * wire edge). The typed member carries the changed object itself and, for updates, the names of the changed fields.
 */
interface Delivered<E extends EmulationEvent = EmulationEvent> {
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
};

const ChangeKind = builder.enumType("ChangeKind", {
  description: "What happened to the object of an event",
  values: ["CREATED", "UPDATED", "DELETED", "OPENED", "CLOSED", "RESTORED"] as const,
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
      resolve: (e, _a, ctx) => toGns3Notification(ctx, e.event).event,
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

// Event payloads are rows without their timestamp (events travel as JSON): what the object types read is there.
const row = <T>(x: object) => x as T;

builder.objectRef<Delivered<NodeEvent>>("NodeEvent").implement({
  ...member("NodeEvent", "A node created, updated (status, position, settings...) or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, resolve: changeKind }),
    node: t.field({
      type: NodeRef,
      description: "The node as it is after the change (as it was, for node.deleted: fields read through other objects, such as nodeDirectory, are then null)",
      resolve: (e) => row<Node>(e.event.node),
    }),
    changed: t.stringList({ ...changed, resolve: (e) => e.event.changed ?? null }),
  }),
});
builder.objectRef<Delivered<LinkEvent>>("LinkEvent").implement({
  ...member("LinkEvent", "A link created, updated (filters, suspension, capture) or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, resolve: changeKind }),
    link: t.field({ type: LinkRef, resolve: (e) => row<Link>(e.event.link) }),
  }),
});
builder.objectRef<Delivered<DrawingEvent>>("DrawingEvent").implement({
  ...member("DrawingEvent", "A drawing created, updated or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, resolve: changeKind }),
    drawing: t.field({ type: DrawingRef, resolve: (e) => row<Drawing>(e.event.drawing) }),
    changed: t.stringList({ ...changed, resolve: (e) => e.event.changed ?? null }),
  }),
});
builder.objectRef<Delivered<SnapshotEvent>>("SnapshotEvent").implement({
  ...member("SnapshotEvent", "A snapshot restored into its project"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, resolve: changeKind }),
    snapshot: t.field({ type: SnapshotRef, resolve: (e) => e.event.snapshot }),
  }),
});
builder.objectRef<Delivered<ProjectEvent>>("ProjectEvent").implement({
  ...member("ProjectEvent", "A project created, updated, opened, closed or deleted"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, resolve: changeKind }),
    project: t.field({ type: ProjectRef, resolve: (e) => row<Project>(e.event.project) }),
    changed: t.stringList({ ...changed, resolve: (e) => e.event.changed ?? null }),
  }),
});
const ComputeEventRef = builder.objectRef<Delivered<ComputeEvent>>("ComputeEvent").implement({
  ...member("ComputeEvent", "A change in the computes registry, including connection and usage changes seen by the monitor"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, resolve: changeKind }),
    compute: t.field({ type: ComputeRef, resolve: (e) => e.event.compute }),
  }),
});
const TemplateEventRef = builder.objectRef<Delivered<TemplateEvent>>("TemplateEvent").implement({
  ...member("TemplateEvent", "A template created, updated or deleted (as it is after the change, or as it was)"),
  fields: (t) => ({
    kind: t.field({ type: ChangeKind, resolve: changeKind }),
    template: t.field({ type: Template, resolve: (e) => e.event.template }),
  }),
});
builder.objectRef<Delivered<SettingsEvent>>("SettingsEvent").implement({
  ...member("SettingsEvent", "The GUI settings document saved"),
  fields: (t) => ({ settings: t.field({ type: "JSON", resolve: (e) => e.event.settings }) }),
});

const isNodeEvent = (e: EmulationEvent): e is NodeEvent => e.type.startsWith("node.");
const isLinkEvent = (e: EmulationEvent): e is LinkEvent => e.type.startsWith("link.");

/** The events about a node (its own and its links') and/or a link; every event when neither is given. */
function concerning(nodeId: string | number | null | undefined, linkId: string | number | null | undefined) {
  const node = nodeId == null ? undefined : String(nodeId);
  const link = linkId == null ? undefined : String(linkId);
  return (e: EmulationEvent): e is EmulationEvent =>
    (node === undefined || (isNodeEvent(e) && e.node.id === node) || (isLinkEvent(e) && e.link.endpoints.some((p) => p.nodeId === node))) &&
    (link === undefined || (isLinkEvent(e) && e.link.id === link));
}

export function cursor(after: string | null | undefined): string | undefined {
  if (after != null && !isEventId(after)) throw new InvalidInputError(`${after} is not an event cursor`);
  return after ?? undefined;
}

/** The events of a topic, replayed from `after` when given (bounded by the bus replay window), optionally narrowed. */
async function* tail<E extends EmulationEvent>(
  ctx: AppContext,
  topic: Topic<EmulationEvent>,
  after: string | undefined,
  keep: (e: EmulationEvent) => e is E = (e): e is E => true,
): AsyncGenerator<Delivered<E>> {
  const sub = ctx.bus.subscribe(topic, { after });
  try {
    for await (const { id, data } of sub) if (keep(data)) yield { cursor: id, event: data };
  } finally {
    await sub.return();
  }
}

const isCompute = (e: EmulationEvent): e is ComputeEvent => e.type.startsWith("compute.");
const isTemplate = (e: EmulationEvent): e is TemplateEvent => e.type.startsWith("template.");

// With `errors`, a domain error thrown while subscribing arrives as one typed result, then the subscription ends.
builder.subscriptionFields((t) => ({
  projectEvents: t.field({
    type: EmulationEventRef,
    errors: { types: DOMAIN_ERRORS },
    description: "The node, link, drawing and snapshot events of one project (NodeEvent, LinkEvent, DrawingEvent, SnapshotEvent)",
    args: {
      projectId: t.arg.id({ required: true }),
      nodeId: t.arg.id({ description: "Only this node's events, and those of the links attached to it" }),
      linkId: t.arg.id({ description: "Only this link's events" }),
      after: t.arg.string({ description: "Resume after this cursor" }),
    },
    subscribe: async (_r, args, ctx) => {
      const from = cursor(args.after);
      await getProject(ctx, String(args.projectId));
      return tail(ctx, projectTopic(String(args.projectId)), from, concerning(args.nodeId, args.linkId));
    },
    resolve: (e) => e,
  }),
  controllerEvents: t.field({
    type: EmulationEventRef,
    errors: { types: DOMAIN_ERRORS },
    description: "Server-wide events: ProjectEvent, ComputeEvent, TemplateEvent, SettingsEvent",
    args: { after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: (_r, args, ctx) => tail(ctx, controllerTopic, cursor(args.after)),
    resolve: (e) => e,
  }),
  computeEvents: t.field({
    type: ComputeEventRef,
    description: "Computes created, updated (connection, usage) and deleted",
    args: { after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: (_r, args, ctx) => tail(ctx, controllerTopic, cursor(args.after), isCompute),
    resolve: (e) => e,
  }),
  templateEvents: t.field({
    type: TemplateEventRef,
    errors: { types: DOMAIN_ERRORS },
    description: "Templates created, updated and deleted (the GNS3 GUI's device list follows the same events)",
    args: { after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: (_r, args, ctx) => tail(ctx, controllerTopic, cursor(args.after), isTemplate),
    resolve: (e) => e,
  }),
}));
