import type { AppContext } from "../../platform/context.js";
import { drawingToRest, drawingUpdatedEvent } from "../drawings/serialize.js";
import type { EmulationEvent } from "../core/events.js";
import { linkToRest } from "../links/serialize.js";
import { nodeToRest } from "../node-model/serialize.js";
import { projectToRest } from "../projects/serialize.js";
import { snapshotToRest } from "../projects/snapshot-store.js";

/** A GNS3 notification as the streams send it: `{action, event}` with the event in GNS3's REST form. */
export interface Gns3Notification {
  action: string;
  event: object;
}

/** The GNS3 wire form of a domain event: the one place the notification streams and `payload` get it from. */
export function toGns3Notification(ctx: AppContext, e: EmulationEvent): Gns3Notification {
  return { action: e.type, event: gns3Object(ctx, e) };
}

function gns3Object(ctx: AppContext, e: EmulationEvent): object {
  switch (e.type) {
    case "node.created":
    case "node.updated":
    case "node.deleted":
      return nodeToRest(e.node, e.projectDir);
    case "link.created":
    case "link.updated":
    case "link.deleted":
      return linkToRest(e.link);
    case "drawing.updated":
      // GNS3 leaves the svg out of drawing.updated unless the update changed it.
      return drawingUpdatedEvent(e.drawing, e.changed?.includes("svg") ?? true);
    case "drawing.created":
    case "drawing.deleted":
      return drawingToRest(e.drawing);
    case "snapshot.restored":
      return snapshotToRest(e.snapshot);
    case "project.created":
    case "project.updated":
    case "project.opened":
    case "project.closed":
    case "project.deleted":
      return projectToRest(ctx, e.project);
    case "compute.created":
    case "compute.updated":
    case "compute.deleted":
      return e.compute;
    case "template.created":
    case "template.updated":
    case "template.deleted":
      return e.template;
    case "settings.updated":
      return e.settings;
  }
}
