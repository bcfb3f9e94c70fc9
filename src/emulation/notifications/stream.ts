import type { AppContext } from "../../platform/context.js";
import { pythonJsonLine } from "../rest/json.js";
import { CONTROLLER_CHANNEL, isProjectChannel, projectChannel, type Gns3Notification } from "../events.js";
import { systemUsage } from "./usage.js";

/**
 * controller: project.*, compute.* …; project: one project's events; compute: the compute's global stream
 * (`/v2/compute/notifications/ws`), every project's events with the project id at top level (compat §11.1).
 */
export type StreamScope = { kind: "controller" } | { kind: "project"; projectId: string } | { kind: "compute" };

/** GNS3 sends a ping first, then again whenever the stream has been silent this long (1 s on a compute). */
const PING_INTERVAL_MS: Record<StreamScope["kind"], number> = { controller: 5000, project: 5000, compute: 1000 };

const channelProjectId = (channel: string) => channel.slice(projectChannel("").length);

function scopeFilter(scope: StreamScope): (channel: string) => boolean {
  if (scope.kind === "compute") return isProjectChannel;
  const channel = scope.kind === "controller" ? CONTROLLER_CHANNEL : projectChannel(scope.projectId);
  return (c) => c === channel;
}

const scopeMessage = (scope: StreamScope, channel: string, data: Gns3Notification): object =>
  scope.kind === "compute" ? { ...data, project_id: channelProjectId(channel) } : data;

/**
 * One GNS3 notification stream, whatever the transport: `send` gets each message as GNS3 serialises it
 * (sorted keys, Python separators). Returns the function that ends the stream.
 */
export function openNotificationStream(ctx: AppContext, scope: StreamScope, send: (message: string) => void): () => void {
  const subscription = ctx.bus.subscribe(scopeFilter(scope));
  const pingInterval = PING_INTERVAL_MS[scope.kind];
  let timer: NodeJS.Timeout | undefined;
  let open = true;
  const emit = (message: object) => {
    if (!open) return;
    send(pythonJsonLine(message));
    clearTimeout(timer);
    timer = setTimeout(() => emit({ action: "ping", event: systemUsage() }), pingInterval);
  };
  emit({ action: "ping", event: systemUsage() });
  void (async () => {
    for await (const e of subscription) emit(scopeMessage(scope, e.channel, e.data as Gns3Notification));
  })();
  return () => {
    open = false;
    clearTimeout(timer);
    void subscription.return();
  };
}
