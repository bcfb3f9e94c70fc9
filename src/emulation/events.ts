import type { AppContext } from "../platform/context.js";

/**
 * Channels of the emulation events on the shared bus. Every message is the GNS3 notification shape
 * {action, event}; the legacy streams write it as is, GraphQL subscriptions map it to types.
 */
export const CONTROLLER_CHANNEL = "emulation:controller";
export const projectChannel = (projectId: string) => `emulation:project:${projectId}`;
export const isProjectChannel = (channel: string) => channel.startsWith("emulation:project:");

export interface Gns3Notification {
  action: string;
  event: object;
}

/** node.*, link.*, drawing.*, snapshot.restored, log.* — the project stream of one project. */
export function publishProjectEvent(ctx: AppContext, projectId: string, action: string, event: object) {
  return ctx.bus.publish(projectChannel(projectId), { action, event } satisfies Gns3Notification);
}

/** project.*, compute.*, settings.updated — the controller stream. */
export function publishControllerEvent(ctx: AppContext, action: string, event: object) {
  return ctx.bus.publish(CONTROLLER_CHANNEL, { action, event } satisfies Gns3Notification);
}
