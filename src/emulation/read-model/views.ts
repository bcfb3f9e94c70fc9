import type { AppContext } from "../../platform/context.js";
import { anyOf } from "../../platform/events.js";
import { ReadViews } from "../../platform/read-views.js";
import { allProjectsTopic, channelProjectId, controllerTopic } from "../core/events.js";

/**
 * The read views of projects (the nodes and links lists as sent), one scope per project: dropped by the emulation's
 * publish functions at once and by every project or topology event the bus brings.
 */
export function projectReadViews(ctx: AppContext): ReadViews {
  const views = new ReadViews();
  views.follow(ctx, anyOf(allProjectsTopic, controllerTopic), (e, channel) => channelProjectId(channel) ?? ("project" in e ? e.project.id : undefined));
  return views;
}
