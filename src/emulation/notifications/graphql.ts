import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import type { AppContext } from "../../platform/context.js";
import { isEventId } from "../../platform/events.js";
import { InvalidInputError } from "../../platform/errors.js";
import { CONTROLLER_CHANNEL, projectChannel, type Gns3Notification } from "../events.js";
import { getProject } from "../projects/lookup.js";

export interface EmulationEventShape {
  cursor: string;
  action: string;
  payload: unknown;
}

const EmulationEvent = builder.objectRef<EmulationEventShape>("EmulationEvent").implement({
  description: "A GNS3 notification (node.created, link.updated, project.closed, ...) with its position on the event bus",
  fields: (t) => ({
    cursor: t.exposeString("cursor", { description: "Pass as `after` when resubscribing to receive what was missed (bounded replay window)" }),
    action: t.exposeString("action", { description: "The GNS3 action name, e.g. node.updated" }),
    payload: t.field({ type: "JSON", description: "The object as the GNS3 REST API returns it", resolve: (e) => e.payload }),
  }),
});

/** Bus events of one channel, replayed from `after` when given (bounded by the bus replay window). */
export async function* tail(ctx: AppContext, channel: string, after: string | undefined): AsyncGenerator<EmulationEventShape> {
  const sub = ctx.bus.subscribe((c) => c === channel, { after });
  try {
    for await (const e of sub) {
      const { action, event } = e.data as Gns3Notification;
      yield { cursor: e.id, action, payload: event };
    }
  } finally {
    await sub.return();
  }
}

export function cursor(after: string | null | undefined): string | undefined {
  if (after != null && !isEventId(after)) throw new InvalidInputError(`${after} is not an event cursor`);
  return after ?? undefined;
}

// With `errors`, a domain error thrown while subscribing arrives as one typed result, then the subscription ends.
builder.subscriptionFields((t) => ({
  projectEvents: t.field({
    type: EmulationEvent,
    errors: { types: DOMAIN_ERRORS },
    description: "node.*, link.*, drawing.*, snapshot.* and log.* events of one project",
    args: { projectId: t.arg.id({ required: true }), after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: async (_r, { projectId, after }, ctx) => {
      const from = cursor(after);
      await getProject(ctx, String(projectId));
      return tail(ctx, projectChannel(String(projectId)), from);
    },
    resolve: (e) => e,
  }),
  controllerEvents: t.field({
    type: EmulationEvent,
    errors: { types: DOMAIN_ERRORS },
    description: "project.*, compute.* and other server-wide events",
    args: { after: t.arg.string({ description: "Resume after this cursor" }) },
    subscribe: (_r, { after }, ctx) => tail(ctx, CONTROLLER_CHANNEL, cursor(after)),
    resolve: (e) => e,
  }),
}));
